"""The web playground: a browser page over the same AnswerEvents as Slack and Teams (off unless enabled).

Other packages import only `WebPlaygroundAdapter` (and the `ArticleLookup` callable type it takes) from here.
Internal modules: page (the HTML and static files), events (AnswerEvents as Server-Sent Events), inbound
(request validation), article (the side panel's view of a cited article), records, labels.
"""

from adapters.web.app import (
    _SECURITY_HEADERS as SECURITY_HEADERS,  # the operator page (bot/report/admin.py) shares them
)
from adapters.web.app import ArticleLookup, WebPlaygroundAdapter, published_only

__all__ = ["SECURITY_HEADERS", "ArticleLookup", "WebPlaygroundAdapter", "published_only"]
