"""The deployment manifests validate against their schemas, offline.

- `manifests/k8s/*.yaml` against the Kubernetes OpenAPI schemas bundled in `kubernetes-validate` (strict:
  an unknown field is an error), for the oldest Kubernetes release we support.
- `manifests/slack/*.yml` against the app-manifest fields Slack documents (Slack's app manifest reference;
  slackapi/manifest-schema), restated below for the parts regbot uses, with unknown keys refused.

Each validator is also shown a broken copy, so a validator that accepted anything would fail here.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from testkit import REPO_ROOT

K8S = REPO_ROOT / "manifests" / "k8s"
SLACK = REPO_ROOT / "manifests" / "slack"
KUBERNETES_VERSION = "1.30"  # the oldest release the manifests target (autoscaling/v2, policy/v1)


def documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def kubernetes_objects() -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{path.name}:{doc['kind']}/{doc['metadata']['name']}", doc)
        for path in sorted(K8S.glob("*.yaml"))
        for doc in documents(path)
        if doc.get("kind") != "Kustomization"
    ]


def validate_kubernetes(doc: dict[str, Any]) -> None:
    kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


class TestKubernetesManifests:
    @pytest.mark.parametrize(("name", "doc"), kubernetes_objects(), ids=[n for n, _ in kubernetes_objects()])
    def test_object_is_valid_for_kubernetes(self, name: str, doc: dict[str, Any]) -> None:
        validate_kubernetes(doc)

    def test_kustomization_lists_every_manifest_but_the_secret_example(self) -> None:
        kustomization = documents(K8S / "kustomization.yaml")[0]
        listed = set(kustomization["resources"])
        present = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml", "secret.example.yaml"}

        assert kustomization["apiVersion"] == "kustomize.config.k8s.io/v1beta1"
        assert listed == present

    @pytest.mark.parametrize(
        "break_it",
        [
            pytest.param(lambda d: d["spec"].__setitem__("replicass", 2), id="misspelled-field"),
            pytest.param(lambda d: d["spec"]["template"]["spec"]["containers"][0]["ports"][0]
                         .__setitem__("containerPort", "http"), id="port-as-text"),
            pytest.param(lambda d: d["spec"].pop("selector"), id="missing-selector"),
        ],
    )
    def test_a_broken_deployment_is_refused(self, break_it) -> None:
        deployment = copy.deepcopy(documents(K8S / "deployment.yaml")[0])
        break_it(deployment)

        with pytest.raises(kubernetes_validate.ValidationError):
            validate_kubernetes(deployment)


_URL = {"type": "string", "pattern": "^https?://", "maxLength": 3500}
_SCOPES = {"type": "array", "items": {"type": "string", "pattern": "^[a-z_.]+:?[a-z_.]*$", "maxLength": 50},
           "maxItems": 255, "uniqueItems": True}


def _closed(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "properties": properties, "required": list(required)}


_PROMPTS = {"type": "array", "items": _closed({"title": {"type": "string"}, "message": {"type": "string"}},
                                              required=("title", "message"))}


# The documented fields of a Slack app manifest that a bot like regbot can use, with their documented limits.
SLACK_APP_MANIFEST = _closed(
    {
        "_metadata": _closed({"major_version": {"type": "integer"}, "minor_version": {"type": "integer"}}),
        "display_information": _closed(
            {
                "name": {"type": "string", "minLength": 1, "maxLength": 35},
                "description": {"type": "string", "minLength": 1, "maxLength": 140},
                "long_description": {"type": "string", "minLength": 175, "maxLength": 4000},
                "background_color": {"type": "string", "pattern": "^#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?$"},
            },
            required=("name",),
        ),
        "features": _closed(
            {
                "app_home": _closed({"home_tab_enabled": {"type": "boolean"},
                                     "messages_tab_enabled": {"type": "boolean"},
                                     "messages_tab_read_only_enabled": {"type": "boolean"}}),
                "bot_user": _closed({"display_name": {"type": "string", "minLength": 1, "maxLength": 80},
                                     "always_online": {"type": "boolean"}}, required=("display_name",)),
                "assistant_view": _closed({"assistant_description": {"type": "string"}, "suggested_prompts": _PROMPTS},
                                          required=("assistant_description",)),
                "agent_view": _closed({"agent_description": {"type": "string"}, "suggested_prompts": _PROMPTS},
                                      required=("agent_description",)),
                "slash_commands": {
                    "type": "array", "minItems": 1, "maxItems": 50,
                    "items": _closed(
                        {
                            "command": {"type": "string", "pattern": "^/", "minLength": 2, "maxLength": 32},
                            "url": _URL,
                            "description": {"type": "string", "minLength": 1, "maxLength": 2000},
                            "usage_hint": {"type": "string", "minLength": 1, "maxLength": 1000},
                            "should_escape": {"type": "boolean"},
                        },
                        required=("command", "description"),
                    ),
                },
                "unfurl_domains": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 5},
            }
        ),
        "oauth_config": _closed(
            {
                "redirect_urls": {"type": "array", "items": {"type": "string"}},
                "scopes": _closed({"bot": _SCOPES, "user": _SCOPES}),
                "token_management_enabled": {"type": "boolean"},
            }
        ),
        "settings": _closed(
            {
                "event_subscriptions": _closed(
                    {
                        "request_url": _URL,
                        "bot_events": {"type": "array", "items": {"type": "string", "maxLength": 50},
                                       "maxItems": 100, "uniqueItems": True},
                        "user_events": {"type": "array", "items": {"type": "string", "maxLength": 50},
                                        "maxItems": 100, "uniqueItems": True},
                    }
                ),
                "interactivity": _closed({"is_enabled": {"type": "boolean"}, "request_url": _URL,
                                          "message_menu_options_url": _URL}, required=("is_enabled",)),
                "org_deploy_enabled": {"type": "boolean"},
                "socket_mode_enabled": {"type": "boolean"},
                "token_rotation_enabled": {"type": "boolean"},
                "is_hosted": {"type": "boolean"},
            }
        ),
    },
    required=("display_information",),
)


def validate_slack(manifest: dict[str, Any]) -> None:
    jsonschema.validate(manifest, SLACK_APP_MANIFEST, cls=jsonschema.Draft7Validator)


class TestSlackManifests:
    @pytest.mark.parametrize("name", ["manifest.yml", "manifest.socket-mode.yml"])
    def test_manifest_uses_only_documented_fields_within_their_limits(self, name: str) -> None:
        validate_slack(yaml.safe_load((SLACK / name).read_text(encoding="utf-8")))

    @pytest.mark.parametrize(
        "break_it",
        [
            pytest.param(lambda m: m["features"]["bot_user"].__setitem__("displayname", "규정봇"), id="unknown-key"),
            pytest.param(lambda m: m["display_information"].__setitem__("name", "규" * 36), id="name-too-long"),
            pytest.param(lambda m: m["features"]["slash_commands"][0].__setitem__("command", "regulation"),
                         id="command-without-slash"),
            pytest.param(lambda m: m["settings"]["interactivity"].__setitem__("is_enabled", "yes"), id="not-boolean"),
        ],
    )
    def test_a_broken_manifest_is_refused(self, break_it) -> None:
        manifest = yaml.safe_load((SLACK / "manifest.yml").read_text(encoding="utf-8"))
        break_it(manifest)

        with pytest.raises(jsonschema.ValidationError):
            validate_slack(manifest)
