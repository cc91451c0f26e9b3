"""adapters/conversation.py: conversation keys composed in one place and read back, in the stored format."""

import pytest

from adapters.conversation import ConversationKey


class TestComposing:
    def test_a_slack_thread_is_team_channel_and_thread(self):
        assert ConversationKey.slack("T01", "C02", "1712345678.000100").text == "slack:T01:C02:1712345678.000100"

    def test_a_slash_command_is_its_own_conversation_in_the_channel(self):
        assert ConversationKey.slack_command("T01", "C02", "tr-9").text == "slack:T01:C02:command:tr-9"

    def test_a_teams_conversation_is_tenant_and_conversation_id(self):
        key = ConversationKey.teams("tenant-1", "19:abc@thread.tacv2;messageid=17")

        assert str(key) == "teams:tenant-1:19:abc@thread.tacv2;messageid=17"

    def test_a_playground_tab_has_no_workspace_segment(self):
        assert ConversationKey.web("0123456789abcdef").text == "web:0123456789abcdef"


class TestParsing:
    @pytest.mark.parametrize(("text", "platform", "workspace", "channel"), [
        ("slack:T01:C02:1712345678.000100", "slack", "T01", "C02"),
        ("slack:T01:C02:command:tr-9", "slack", "T01", "C02"),
        ("teams:tenant-1:19:abc@thread.tacv2;messageid=17", "teams", "tenant-1", "19:abc@thread.tacv2"),
        ("teams::a:personal-chat", "teams", "", "a:personal-chat"),
        ("web:0123456789abcdef", "web", "", ""),
        ("cli:local:chat", "cli", "local", ""),
        ("session-42", "other", "", ""),
        ("", "other", "", ""),
    ])
    def test_a_stored_key_reads_as_platform_workspace_and_channel(self, text, platform, workspace, channel):
        key = ConversationKey.parse(text)

        assert (key.platform, key.workspace, key.channel) == (platform, workspace, channel)
        assert key.text == text

    def test_every_composed_key_parses_back_to_itself(self):
        composed = [ConversationKey.slack("T", "C", "1.2"), ConversationKey.slack_command("T", "C", "x"),
                    ConversationKey.teams("t", "19:x;messageid=1"), ConversationKey.web("abcdefgh")]

        assert [ConversationKey.parse(key.text) for key in composed] == composed
