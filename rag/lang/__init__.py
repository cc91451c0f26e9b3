"""The language home: Korean and regulation language in one place.

- the reference grammar (`reference`), question words and compound-question joins (`questions`), follow-up
  openers (`followup`), figure and sanction cues (`quantities`, `sanctions`), Korean small talk (`chitchat`),
  stop words (`stopwords`), script marks (`script`) and document labels (`labels`);
- the loaders of the data files beside `rag/data/*.yaml`, extended per deployment from its lexicon folder
  (`lexicon`);
- the detector (`detect_language`), the bilingual glossary that turns English and Vietnamese questions into the
  statutes' Korean words (`Glossary`), and the framing strings of a reply in the asker's language (`framing_for`).

Quotes never pass through here: an article is always quoted in its own words.
"""

from rag.lang.detect import FOREIGN, LANGUAGES, Language, detect_language
from rag.lang.framing import Framing, framing_for, label_set
from rag.lang.glossary import Glossary, GlossaryMatch, load_glossary
from rag.lang.smalltalk import foreign_smalltalk_kind

__all__ = ["FOREIGN", "LANGUAGES", "Framing", "Glossary", "GlossaryMatch", "Language", "detect_language",
           "foreign_smalltalk_kind", "framing_for", "label_set", "load_glossary"]
