"""Telegram HTML parse mode of the emulator."""

import pytest

from tests.fakes.html import HTMLParseError, parse_html, utf16_len


def test_plain_and_entities():
    assert parse_html("a <b>bold</b> <i>it</i>") == (
        "a bold it",
        [{"type": "bold", "offset": 2, "length": 4}, {"type": "italic", "offset": 7, "length": 2}],
    )


def test_synonyms_and_nesting():
    text, ents = parse_html("<strong><em>x</em></strong><ins>u</ins><del>s</del><strike>t</strike>")
    assert text == "xust"
    assert [e["type"] for e in ents] == ["bold", "italic", "underline", "strikethrough", "strikethrough"]


def test_case_insensitive_tags():
    assert parse_html("<B>x</b>")[1] == [{"type": "bold", "offset": 0, "length": 1}]


def test_html_entities_decoded():
    assert parse_html("&lt;&gt;&amp;&quot;&#65;&#x42;")[0] == '<>&"AB'


def test_utf16_offsets():
    text, ents = parse_html("🃏 <b>♠ Туз</b>")
    assert text == "🃏 ♠ Туз"
    assert ents == [{"type": "bold", "offset": 3, "length": 5}]
    assert utf16_len("🃏") == 2


def test_links_code_pre_spoiler_quote():
    text, ents = parse_html(
        '<a href="https://t.me/x?a=1&amp;b=2">L</a><code>c</code>'
        '<pre><code class="language-python">p</code></pre>'
        '<span class="tg-spoiler">s</span><tg-spoiler>t</tg-spoiler>'
        "<blockquote expandable>q</blockquote>"
        '<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>'
    )
    assert text == "Lcpstq👍"
    types = {e["type"]: e for e in ents}
    assert types["text_link"]["url"] == "https://t.me/x?a=1&b=2"
    assert types["pre"]["language"] == "python"
    assert set(types) == {"text_link", "code", "pre", "spoiler", "expandable_blockquote", "custom_emoji"}


def test_whitespace_trimmed_and_empty_entities_dropped():
    assert parse_html("  <b> x </b>\n") == ("x", [{"type": "bold", "offset": 0, "length": 1}])
    assert parse_html("<b></b>y") == ("y", [])


@pytest.mark.parametrize(
    "src, message",
    [
        ("<br>", 'Unsupported start tag "br" at byte offset 0'),
        ("ab <x>", 'Unsupported start tag "x" at byte offset 3'),
        ("a < b", 'Unsupported start tag "" at byte offset 2'),
        ("Я <p>", 'Unsupported start tag "p" at byte offset 3'),  # byte offsets: Я is 2 bytes
        ("<b>x", 'Can\'t find end tag corresponding to start tag "b"'),
        ("x</b>", "Unexpected end tag at byte offset 1"),
        ("<b>a<i>b</b></i>", 'Unmatched end tag at byte offset 8, expected "</i>", found "</b>"'),
        ("x <", "Unclosed start tag at byte offset 2"),
        ("<b", "Unclosed start tag at byte offset 0"),
        ("<span>x</span>", 'Tag "span" must have class "tg-spoiler" at byte offset 0'),
        ("Tom & Jerry", 'Unescaped "&" at byte offset 4'),
        ("&nbsp;", 'Unescaped "&" at byte offset 0'),
    ],
)
def test_parse_errors(src, message):
    with pytest.raises(HTMLParseError) as exc:
        parse_html(src)
    assert str(exc.value) == message


def test_bare_ampersand_allowed_when_not_strict():
    assert parse_html("Tom & Jerry", strict_amp=False) == ("Tom & Jerry", [])


# -- <tg-time>: Telegram's date-time entity (Bot API MessageEntity type "date_time") ------------


@pytest.mark.parametrize("fmt", ["r", "", "w", "d", "D", "t", "T", "wd", "wDT", "dt", "Dt"])
def test_tg_time_gives_a_date_time_entity(fmt):
    text, ents = parse_html(f'До <tg-time unix="1796131919" format="{fmt}">≈ 90 с</tg-time>!')
    assert text == "До ≈ 90 с!"
    want = {"type": "date_time", "offset": 3, "length": 6, "unix_time": 1796131919}
    if fmt:
        want["date_time_format"] = fmt
    assert ents == [want]


def test_tg_time_without_a_usable_unix_keeps_the_text_only():
    # TDLib: the entity is dropped when unix is missing, zero or not a number
    for tag in ('<tg-time format="r">', '<tg-time unix="0" format="r">', '<tg-time unix="soon">'):
        assert parse_html(tag + "x</tg-time>") == ("x", [])
    assert parse_html("<tg-time unix=17 format=r>x</tg-time>")[1][0]["unix_time"] == 17


@pytest.mark.parametrize("fmt", ["rt", "x", "tw", "dD", "TT", "R1", "relative"])
def test_tg_time_with_a_format_outside_the_grammar_is_refused(fmt):
    with pytest.raises(HTMLParseError, match="Invalid date format used"):
        parse_html(f'<tg-time unix="1796131919" format="{fmt}">x</tg-time>')
