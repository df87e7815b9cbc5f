"""The one line splitter: `\n`, `\r\n` and `\r` end a line, nothing else does."""
from hypothesis import given
from hypothesis import strategies as st

from ifr.syntax.lines import split_lines

# What str.splitlines breaks at and editors do not.
NOT_LINE_ENDS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def test_only_the_three_line_ends_split():
    text = "a = 1 # x\x0cy\nb = 2\r\nc\u2028d\re"
    assert split_lines(text) == ["a = 1 # x\x0cy", "b = 2", "c\u2028d", "e"]
    assert split_lines(text, keepends=True) == ["a = 1 # x\x0cy\n", "b = 2\r\n", "c\u2028d\r", "e"]


@given(st.text(alphabet=st.sampled_from("ab \n\r" + NOT_LINE_ENDS)))
def test_agrees_with_splitlines_where_both_see_the_same_ends(text):
    assert "".join(split_lines(text, keepends=True)) == text
    plain = text.translate({ord(c): "_" for c in NOT_LINE_ENDS})
    assert split_lines(plain) == plain.splitlines()
    assert [len(line) for line in split_lines(text)] == [len(line) for line in split_lines(plain)]
