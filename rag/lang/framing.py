"""The framing of a reply in the asker's language: every user-facing string of `rag/messages.py` in English and
Vietnamese, under the same keys and with the same placeholders, plus the few lines only a foreign-language reply
needs (the lead that says the article is quoted in Korean, the shape of a quote line).

What the framing frames never changes: an article is quoted in Korean, exactly as written, with its citation.
`framing_for(language)` gives the strings of one language; Korean comes from `rag/messages.py` itself. An adapter's
own labels (its buttons and captions) are built the same way with `label_set`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from rag import messages

# Lines only a reply in another language has. The lead is a whole sentence before the first quote, so a reader
# knows what follows is the Korean text of the article and that it can be shown to someone who reads Korean.
_EN_ONLY = {
    "ANSWER_LEAD": "Here is what the Korean regulations say{about}. The article is quoted in Korean, exactly as "
                   "written, with its reference:",
    "ANSWER_ABOUT": " about {topics}",
    "ANSWER_QUOTE": "Under {label}: 「{quote}」",
    "ANSWER_HELP": "If you need help reading it, show this article to HR or a colleague who reads Korean.",
    "REFUSAL_NO_WORDS": "I could not match your question to the registered regulations. Try naming the topic "
                        "(for example: annual leave, overtime, severance pay, dismissal, maternity leave).",
    "LLM_LANGUAGE_RULE": "The user asked in English. Write the answer in English: explain each point in one or two "
                         "plain sentences, and quote the Korean article text exactly as written (in 「」) with its "
                         "citation number. Never translate inside the quote.",
}
_VI_ONLY = {
    "ANSWER_LEAD": "Đây là nội dung quy định của Hàn Quốc{about}. Điều khoản được trích nguyên văn bằng tiếng "
                   "Hàn, kèm số điều:",
    "ANSWER_ABOUT": " về {topics}",
    "ANSWER_QUOTE": "Theo {label}: 「{quote}」",
    "ANSWER_HELP": "Nếu cần người đọc giúp, hãy đưa điều khoản này cho bộ phận nhân sự hoặc đồng nghiệp biết "
                   "tiếng Hàn.",
    "REFUSAL_NO_WORDS": "Tôi chưa tìm được quy định phù hợp với câu hỏi của bạn. Hãy nêu rõ chủ đề (ví dụ: nghỉ "
                        "phép năm, làm thêm giờ, trợ cấp thôi việc, sa thải, nghỉ thai sản).",
    "LLM_LANGUAGE_RULE": "Người dùng hỏi bằng tiếng Việt. Hãy trả lời bằng tiếng Việt: giải thích mỗi ý trong một "
                         "hai câu đơn giản, và trích nguyên văn điều khoản tiếng Hàn (trong 「」) kèm số trích dẫn. "
                         "Không dịch bên trong phần trích dẫn.",
}

ENGLISH = {
    "STATUS_UNDERSTANDING": "Reading your question…",
    "STATUS_LOOKUP": "Looking up the article…",
    "STATUS_SEARCHING": "Searching the regulations…",
    "STATUS_RESEARCHING": "Searching once more with other words…",
    "STATUS_WRITING": "Writing the answer…",
    "STATUS_VERIFYING": "Checking the answer against the quoted articles…",
    "STATUS_QUEUED": "Many questions right now; yours is number {position} in the queue.",
    "STATUS_TOOL_ARTICLE": "Checking {article}…",
    "STATUS_TOOL_SEARCH": "Searching more regulations about '{query}'…",
    "STATUS_TOOL_OVERVIEW": "Checking how {doc} is organised…",
    "CHITCHAT_GREETING": "Hello! I answer questions about the registered regulations and quote the article that "
                         "applies. Ask in English, Vietnamese or Korean; the articles themselves are quoted in "
                         "Korean. To see what you can ask, try \"What can I ask?\"",
    "CHITCHAT_MORNING": "Good morning! Ask me about the regulations whenever you need to.",
    "CHITCHAT_THANKS": "Glad it helped. Ask any time you have another question about the regulations.",
    "CHITCHAT_GOODBYE": "Thanks, and see you next time! Come back whenever a rule is unclear.",
    "CHITCHAT_PAUSE": "Sure, take your time. Ask whenever you are ready.",
    "CHITCHAT_REACTION": "😊 Ask me anything else about the regulations.",
    "CHITCHAT_APOLOGY": "No problem at all! Ask whenever you like.",
    "CHITCHAT_PRAISE": "Thank you! 😊 Ask me anything else about the regulations.",
    "CHITCHAT_COMPLAINT": "Sorry that did not help. Tell me a bit more (who, when, which rule) and I will look "
                          "again. The 👎 button under an answer tells the team what to improve.",
    "CHITCHAT_TEST": "Yes, I am working. Ask me about a regulation.",
    "CHITCHAT_IDENTITY": "I am not a person but an AI assistant for the regulations. I find the article in the "
                         "registered documents and answer with its reference and its Korean text. I do not make "
                         "things up: when the regulations are silent, I tell you whom to ask.",
    "CHITCHAT_CAPABILITY": "Ask me anything about the registered regulations. What I can search now: {documents}.",
    "CHITCHAT_USAGE": "Write your question in your own words. I find the article and quote it (in Korean) with its "
                      "reference. You can also name an article directly (for example \"{reference}\"), or tap a "
                      "suggested question under an answer.",
    "CHITCHAT_EXAMPLES": "For example:\n{examples}",
    "CHITCHAT_EXAMPLE": "• {question}",
    "CHITCHAT_EXAMPLE_QUESTION": "What does {doc} say about {title}?",
    "CHITCHAT_OTHER": "I see! I am the regulations assistant. Ask me about working hours, leave, pay or travel "
                      "expenses and I will find the article.",
    "CHITCHAT_OFF_TOPIC": "I cannot help with that: I answer from the registered regulations only. Ask me about "
                          "working hours, leave, pay or travel expenses and I will find the article.",
    "CHITCHAT_DEFAULT_DOCUMENTS": "company rules and statutes",
    "MORE_DOCUMENTS": " and {count} more",
    "NOT_FOUND": "I could not find anything on this in the registered regulations. It may not be covered; please "
                 "check with the responsible team (HR or general affairs).",
    "NOT_COVERED": "I could not find anything about {looked_for} in the registered regulations.",
    "NOT_ANSWERED": "The registered regulations mention {looked_for}, but I found no article that answers this "
                    "question.",
    "NOT_COVERED_CLOSEST": "I checked the closest ones, {closest}, but no article there answers it.",
    "NOT_COVERED_ASK": "It may be an internal matter or outside the registered regulations: please check with the "
                       "responsible team (HR or general affairs) or the person in charge.",
    "LOOKUP_NOT_FOUND": "I could not find an article for '{query}'. Please check the regulation's name and the "
                        "article number.",
    "OUTLINE_MORE": "  … and {count} more",
    "RULE_CODE_SUFFIX": " (rule no. {code})",
    "FULLTEXT_HEADER": "**{doc}, full text** (page {page} of {pages})",
    "FULLTEXT_NEXT": "For the next page, ask for '{doc} 전문 {page}쪽'.",
    "LOOKUP_DECREE_NOT_INDEXED": "The {decree} of 「{doc}」 is not registered. 「{doc}」 itself can be searched.",
    "LOOKUP_DOC_NOT_INDEXED": "「{doc}」 is not among the registered regulations. I can look up articles of "
                              "registered ones only: check the name, or ask about the content as a question.",
    "LOOKUP_MISSING": "{targets} could not be found in 「{doc}」.",
    "LOOKUP_CHOOSE": "{target} exists in several regulations: {candidates}. Which regulation's {target} do you "
                     "mean?",
    "LOOKUP_AMBIGUOUS": "Several regulations match '{name}': {candidates}. Please ask again with the exact name.",
    "EXTRACTIVE_PART": "**{question}**",
    "EXTRACTIVE_SUPPORT": "Sources (Korean text as written):",
    "RELATED_LAW": "Related statutes:",
    "RELATED_RULES": "Related company rules:",
    "OFFLINE_NOTE": "(The AI service was unavailable, so the regulations are quoted as written.)",
    "UNVERIFIED_NOTE": "(Some statements could not be confirmed in the quoted articles and were left out.)",
    "EMPTY_QUESTION": "Your question is empty. Please write it as a sentence, for example: \"How many days of "
                      "annual leave do I get?\"",
    "NO_TEXT_QUESTION": "I cannot read a question from emoji or symbols alone. Please write it in words.",
    "TOO_LONG_QUESTION": "Your question is too long ({length:,} characters). Please keep it within {limit:,}.",
    "RATE_LIMITED": "Too many requests. Please ask again in {seconds} seconds.",
    "BUSY": "Too many questions right now. Please ask again in a moment.",
    "INTERNAL_ERROR": "Sorry, something went wrong while writing the answer. Please try again shortly.",
    "INDEX_UNAVAILABLE": "The regulations index is not available. Please ask an administrator whether `regbot "
                         "ingest` has been run.",
    "TIMEOUT": "The answer took too long, so I stopped. Please ask again a little more specifically.",
    "STREAM_INTERRUPTED": "(The connection broke off during the answer; only the part above was confirmed.)",
    "FEEDBACK_THANKS": "Thanks for the feedback! It helps us improve the answers.",
    "SHARE_FAILED": "I could not share it in the channel. Please check that the bot is invited to the channel.",
    # Amendments (issue 32): the change record's framing; quoted article text stays Korean.
    "CHANGES_HEADER": "**Amendments to {doc}**",
    "CHANGES_RECENT_HEADER": "**Recently amended regulations** (last {days} days)",
    "CHANGES_IN_FORCE": "In force from {date} (version {old} → {new}, registered {ingested})",
    "CHANGES_PENDING": "In force from {date} (version {old} → {new}, registered {ingested}). Until then the current "
                       "text applies.",
    "CHANGE_LINE": "• {what} {kind}",
    "CHANGE_BEFORE": "  before: {text}",
    "CHANGE_AFTER": "  after: {text}",
    "CHANGES_MORE": "  … and {count} more articles",
    "CHANGES_NONE": "No article of {doc} has changed since it was registered.",
    "CHANGES_NONE_ARTICLE": "{doc} {article} has not changed since it was registered.",
    "CHANGES_NONE_RECENT": "No regulation was amended in the last {days} days.",
    "CHANGES_RECENT_DOC": "• {doc} — {when}: {articles}",
    "AMENDED_NOTE": "※ {label}: amended {date}",
    "AMENDED_PENDING_NOTE": "※ {label}: amended, in force from {date}",
    "HEDGE_LEAD": "I am not sure this article settles your case, but it is the closest one in the regulations.",
    "HEDGE_ASK": "Your situation may turn on details the article does not cover: please check with HR or your labour "
                 "contact, or call the Ministry of Employment and Labor's counselling line 1350 (interpreting "
                 "available).",
    **_EN_ONLY,
}

VIETNAMESE = {
    "STATUS_UNDERSTANDING": "Đang đọc câu hỏi của bạn…",
    "STATUS_LOOKUP": "Đang tìm điều khoản…",
    "STATUS_SEARCHING": "Đang tìm trong các quy định…",
    "STATUS_RESEARCHING": "Đang tìm thêm một lần với từ khác…",
    "STATUS_WRITING": "Đang viết câu trả lời…",
    "STATUS_VERIFYING": "Đang đối chiếu câu trả lời với điều khoản được trích…",
    "STATUS_QUEUED": "Hiện có nhiều câu hỏi; câu của bạn đang ở vị trí thứ {position}.",
    "STATUS_TOOL_ARTICLE": "Đang xem {article}…",
    "STATUS_TOOL_SEARCH": "Đang tìm thêm quy định về '{query}'…",
    "STATUS_TOOL_OVERVIEW": "Đang xem cấu trúc của {doc}…",
    "CHITCHAT_GREETING": "Xin chào! Tôi trả lời các câu hỏi về quy định đã đăng ký và trích dẫn điều khoản áp dụng. "
                         "Bạn có thể hỏi bằng tiếng Việt, tiếng Anh hoặc tiếng Hàn; điều khoản được trích bằng tiếng "
                         "Hàn. Muốn biết có thể hỏi gì, hãy thử \"Tôi có thể hỏi gì?\"",
    "CHITCHAT_MORNING": "Chào buổi sáng! Cần hỏi về quy định thì cứ hỏi nhé.",
    "CHITCHAT_THANKS": "Rất vui vì đã giúp được bạn. Có câu hỏi khác về quy định thì cứ hỏi nhé.",
    "CHITCHAT_GOODBYE": "Cảm ơn bạn, hẹn gặp lại! Khi có quy định nào chưa rõ, hãy quay lại hỏi.",
    "CHITCHAT_PAUSE": "Vâng, bạn cứ từ từ. Sẵn sàng thì hỏi tiếp nhé.",
    "CHITCHAT_REACTION": "😊 Bạn cứ hỏi thêm về quy định nhé.",
    "CHITCHAT_APOLOGY": "Không sao đâu! Bạn cứ hỏi bất cứ lúc nào.",
    "CHITCHAT_PRAISE": "Cảm ơn bạn! 😊 Cứ hỏi thêm về quy định nhé.",
    "CHITCHAT_COMPLAINT": "Xin lỗi vì câu trả lời chưa giúp được. Hãy cho tôi biết thêm (ai, khi nào, quy định nào) "
                          "để tôi tìm lại. Nút 👎 dưới câu trả lời giúp nhóm cải thiện.",
    "CHITCHAT_TEST": "Vâng, tôi đang hoạt động. Hãy hỏi về một quy định.",
    "CHITCHAT_IDENTITY": "Tôi không phải là người mà là trợ lý AI về quy định. Tôi tìm điều khoản trong các văn bản "
                         "đã đăng ký và trả lời kèm số điều và nguyên văn tiếng Hàn. Tôi không bịa ra nội dung: khi "
                         "quy định không nói đến, tôi sẽ chỉ cho bạn nên hỏi ai.",
    "CHITCHAT_CAPABILITY": "Bạn có thể hỏi bất cứ điều gì về các quy định đã đăng ký. Hiện tôi tìm được trong: "
                           "{documents}.",
    "CHITCHAT_USAGE": "Hãy viết câu hỏi theo cách nói của bạn. Tôi tìm điều khoản và trích dẫn nó (bằng tiếng Hàn) "
                      "kèm số điều. Bạn cũng có thể gọi thẳng số điều (ví dụ \"{reference}\") hoặc bấm vào câu hỏi "
                      "gợi ý dưới câu trả lời.",
    "CHITCHAT_EXAMPLES": "Ví dụ:\n{examples}",
    "CHITCHAT_EXAMPLE": "• {question}",
    "CHITCHAT_EXAMPLE_QUESTION": "{doc} quy định gì về {title}?",
    "CHITCHAT_OTHER": "Vâng! Tôi là trợ lý về quy định. Hãy hỏi về giờ làm việc, nghỉ phép, tiền lương hay công tác "
                      "phí, tôi sẽ tìm điều khoản cho bạn.",
    "CHITCHAT_OFF_TOPIC": "Việc này tôi không giúp được: tôi chỉ trả lời dựa trên các quy định đã đăng ký. Hãy hỏi "
                          "về giờ làm việc, nghỉ phép, tiền lương hay công tác phí, tôi sẽ tìm điều khoản cho bạn.",
    "CHITCHAT_DEFAULT_DOCUMENTS": "nội quy công ty và luật",
    "MORE_DOCUMENTS": " và {count} văn bản khác",
    "NOT_FOUND": "Tôi không tìm thấy nội dung này trong các quy định đã đăng ký. Có thể quy định không đề cập; hãy "
                 "hỏi bộ phận phụ trách (nhân sự hoặc hành chính).",
    "NOT_COVERED": "Tôi không tìm thấy nội dung về {looked_for} trong các quy định đã đăng ký.",
    "NOT_ANSWERED": "Các quy định đã đăng ký có nhắc đến {looked_for}, nhưng tôi không tìm thấy điều khoản trả lời "
                    "câu hỏi này.",
    "NOT_COVERED_CLOSEST": "Tôi đã xem các văn bản gần nhất, {closest}, nhưng không có điều khoản nào trả lời.",
    "NOT_COVERED_ASK": "Đây có thể là việc nội bộ hoặc nằm ngoài các quy định đã đăng ký: hãy hỏi bộ phận phụ trách "
                       "(nhân sự hoặc hành chính) hoặc người phụ trách công việc đó.",
    "LOOKUP_NOT_FOUND": "Tôi không tìm thấy điều khoản cho '{query}'. Hãy kiểm tra tên quy định và số điều.",
    "OUTLINE_MORE": "  … và {count} mục khác",
    "RULE_CODE_SUFFIX": " (quy định số {code})",
    "FULLTEXT_HEADER": "**{doc}, toàn văn** (trang {page}/{pages})",
    "FULLTEXT_NEXT": "Để xem trang sau, hãy hỏi '{doc} 전문 {page}쪽'.",
    "LOOKUP_DECREE_NOT_INDEXED": "{decree} của 「{doc}」 chưa được đăng ký. Có thể tìm trong chính 「{doc}」.",
    "LOOKUP_DOC_NOT_INDEXED": "「{doc}」 không có trong các quy định đã đăng ký. Tôi chỉ tra được điều khoản "
                              "của quy định đã đăng ký: hãy kiểm tra tên, hoặc hỏi về nội dung.",
    "LOOKUP_MISSING": "Không tìm thấy {targets} trong 「{doc}」.",
    "LOOKUP_CHOOSE": "{target} có trong nhiều quy định: {candidates}. Bạn muốn xem {target} của quy định nào?",
    "LOOKUP_AMBIGUOUS": "Có nhiều quy định khớp với '{name}': {candidates}. Hãy hỏi lại với tên chính xác.",
    "EXTRACTIVE_PART": "**{question}**",
    "EXTRACTIVE_SUPPORT": "Nguồn (nguyên văn tiếng Hàn):",
    "RELATED_LAW": "Luật liên quan:",
    "RELATED_RULES": "Quy định công ty liên quan:",
    "OFFLINE_NOTE": "(Không kết nối được dịch vụ AI nên quy định được trích nguyên văn.)",
    "UNVERIFIED_NOTE": "(Một số nội dung không được xác nhận trong điều khoản trích dẫn nên đã được lược bỏ.)",
    "EMPTY_QUESTION": "Câu hỏi đang trống. Hãy viết thành câu, ví dụ: \"Tôi được bao nhiêu ngày phép năm?\"",
    "NO_TEXT_QUESTION": "Tôi không hiểu được câu hỏi chỉ có biểu tượng. Hãy viết bằng chữ.",
    "TOO_LONG_QUESTION": "Câu hỏi quá dài ({length:,} ký tự). Hãy viết gọn trong {limit:,} ký tự.",
    "RATE_LIMITED": "Có quá nhiều yêu cầu. Hãy hỏi lại sau {seconds} giây.",
    "BUSY": "Hiện có quá nhiều câu hỏi. Hãy hỏi lại sau ít phút.",
    "INTERNAL_ERROR": "Xin lỗi, đã có lỗi khi viết câu trả lời. Hãy thử lại sau ít phút.",
    "INDEX_UNAVAILABLE": "Chỉ mục quy định hiện không dùng được. Hãy hỏi quản trị viên xem đã chạy `regbot ingest` "
                         "chưa.",
    "TIMEOUT": "Câu trả lời mất quá nhiều thời gian nên tôi đã dừng. Hãy hỏi lại cụ thể hơn một chút.",
    "STREAM_INTERRUPTED": "(Kết nối bị ngắt giữa chừng; chỉ phần ở trên đã được xác nhận.)",
    "FEEDBACK_THANKS": "Cảm ơn góp ý của bạn! Chúng tôi sẽ dùng nó để cải thiện câu trả lời.",
    "SHARE_FAILED": "Không chia sẻ được vào kênh. Hãy kiểm tra bot đã được mời vào kênh chưa.",
    # Sửa đổi (issue 32): phần khung của lịch sử sửa đổi; nội dung điều khoản vẫn giữ tiếng Hàn.
    "CHANGES_HEADER": "**Lịch sử sửa đổi {doc}**",
    "CHANGES_RECENT_HEADER": "**Các quy định mới sửa đổi** ({days} ngày gần đây)",
    "CHANGES_IN_FORCE": "Có hiệu lực từ {date} (phiên bản {old} → {new}, cập nhật {ingested})",
    "CHANGES_PENDING": "Có hiệu lực từ {date} (phiên bản {old} → {new}, cập nhật {ingested}). Trước ngày đó vẫn áp "
                       "dụng điều khoản hiện hành.",
    "CHANGE_LINE": "• {what} {kind}",
    "CHANGE_BEFORE": "  trước: {text}",
    "CHANGE_AFTER": "  sau: {text}",
    "CHANGES_MORE": "  … và {count} điều khác",
    "CHANGES_NONE": "Chưa có điều nào của {doc} thay đổi kể từ khi được đăng ký.",
    "CHANGES_NONE_ARTICLE": "{doc} {article} chưa thay đổi kể từ khi được đăng ký.",
    "CHANGES_NONE_RECENT": "Không có quy định nào được sửa đổi trong {days} ngày gần đây.",
    "CHANGES_RECENT_DOC": "• {doc} — {when}: {articles}",
    "AMENDED_NOTE": "※ {label}: sửa đổi ngày {date}",
    "AMENDED_PENDING_NOTE": "※ {label}: đã sửa đổi, có hiệu lực từ {date}",
    "HEDGE_LEAD": "Tôi không chắc điều khoản này giải quyết đúng trường hợp của bạn, nhưng đây là điều gần nhất "
                  "trong các quy định.",
    "HEDGE_ASK": "Trường hợp của bạn có thể phụ thuộc vào những chi tiết mà điều khoản không nêu: hãy hỏi bộ phận "
                 "nhân sự hoặc gọi tổng đài tư vấn 1350 của Bộ Việc làm và Lao động (có phiên dịch).",
    **_VI_ONLY,
}

KOREAN = {name: value for name, value in vars(messages).items() if name.isupper() and isinstance(value, str)}
_BY_LANGUAGE = {"ko": MappingProxyType(KOREAN), "en": MappingProxyType(ENGLISH), "vi": MappingProxyType(VIETNAMESE)}


class Framing:
    """One language's framing strings as attributes (`framing.NOT_COVERED`), the keys of `rag/messages.py`."""

    def __init__(self, language: str, strings: MappingProxyType) -> None:
        self.language = language
        self._strings = strings

    def __getattr__(self, name: str) -> str:
        try:
            return self._strings[name]
        except KeyError:
            raise AttributeError(f"no framing string {name!r} in {self.language}") from None

    def keys(self) -> frozenset[str]:
        return frozenset(self._strings)


def framing_for(language: str) -> Framing:
    """The framing strings for `language` (ko, en, vi); any other language gets Korean."""
    language = language if language in _BY_LANGUAGE else "ko"
    return Framing(language, _BY_LANGUAGE[language])


def label_set(korean: Mapping[str, str], english: Mapping[str, str], vietnamese: Mapping[str, str]) \
        -> Callable[[str], Framing]:
    """An adapter's own labels (buttons, captions) as `labels_for(language)`: the three tables must hold the same
    keys, so a label never falls back to Korean in an English or Vietnamese reply."""
    tables = {"ko": MappingProxyType(dict(korean)), "en": MappingProxyType(dict(english)),
              "vi": MappingProxyType(dict(vietnamese))}
    for language, table in tables.items():
        if table.keys() != tables["ko"].keys():
            missing = sorted(tables["ko"].keys() ^ table.keys())
            raise ValueError(f"labels in {language} differ from the Korean ones: {', '.join(missing)}")

    def labels_for(language: str) -> Framing:
        language = language if language in tables else "ko"
        return Framing(language, tables[language])

    return labels_for
