"""What a match tells its user, in the user's language, with the English it was written in kept beside it.

The match's notices and reasons (``room``, ``tolerance``, ``series``) are
read by a person, so they are translated (L{velhanet.i18n}); the velha
conformance checker also sorts them by their words ("broke a rule", "text
MSG"), which it can only do in one language. A L{Said} is the translated
text, and its ``english`` is the same text in English, whatever the process
speaks: ``getattr(text, "english", text)`` for a program that reads it.
"""

from __future__ import annotations

from velhanet.i18n import _


class Said(str):
    """A text for the user (``str``: translated) that remembers its English (``english``)."""

    english: str

    def __new__(cls, translated: str, english: str) -> Said:
        text = super().__new__(cls, translated)
        text.english = english
        return text


def said(message: str, **fields: object) -> Said:
    """``message`` (marked ``N_``) translated and formatted with ``fields``; a field that is a L{Said} is English
    in the English text."""
    english = {name: getattr(value, "english", value) for name, value in fields.items()}
    return Said(_(message).format(**fields), message.format(**english))
