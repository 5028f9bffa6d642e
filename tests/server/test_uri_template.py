"""RFC 6570 URI templates: expansion exactly per the RFC, matching back, malformed templates."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcptrio.server.uri_template import MAX_MATCH_LENGTH, UriTemplate

# The variables of RFC 6570 §1.2 and §3.2 (the RFC's associative array is ordered).
RFC_VALUES: dict[str, Any] = {
    "count": ["one", "two", "three"],
    "dom": ["example", "com"],
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ["red", "green", "blue"],
    "keys": {"semi": ";", "dot": ".", "comma": ","},
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": {},
    "undef": None,
}

# RFC 6570 §1.2: the examples of levels 1 to 4.
SECTION_1_2 = [
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("X{#var}", "X#value"),
    ("X{#hello}", "X#Hello%20World!"),
    ("map?{x,y}", "map?1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("X{.var}", "X.value"),
    ("X{.x,y}", "X.1024.768"),
    ("{/var}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]

# RFC 6570 §3.2.1 to §3.2.9.
SECTION_3_2 = [
    # 3.2.1 Variable Expansion
    ("{count}", "one,two,three"),
    ("{count*}", "one,two,three"),
    ("{/count}", "/one,two,three"),
    ("{/count*}", "/one/two/three"),
    ("{;count}", ";count=one,two,three"),
    ("{;count*}", ";count=one;count=two;count=three"),
    ("{?count}", "?count=one,two,three"),
    ("{?count*}", "?count=one&count=two&count=three"),
    ("{&count*}", "&count=one&count=two&count=three"),
    # 3.2.2 Simple String Expansion
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    # 3.2.3 Reserved Expansion
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    # 3.2.4 Fragment Expansion
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    # 3.2.5 Label Expansion with Dot-Prefix
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.var}", "X.value"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("X{.empty_keys}", "X"),
    ("X{.empty_keys*}", "X"),
    # 3.2.6 Path Segment Expansion
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var}", "/value"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    # 3.2.7 Path-Style Parameter Expansion
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    # 3.2.8 Form-Style Query Expansion
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    # 3.2.9 Form-Style Query Continuation
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ("{&x,y,undef}", "&x=1024&y=768"),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]


@pytest.mark.parametrize(("template", "expected"), SECTION_1_2)
def test_expands_every_example_of_rfc_section_1_2(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(RFC_VALUES) == expected


@pytest.mark.parametrize(("template", "expected"), SECTION_3_2)
def test_expands_every_example_of_rfc_section_3_2(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(RFC_VALUES) == expected


def test_numbers_and_booleans_expand_as_text() -> None:
    template = UriTemplate("item/{id}{?scale,exact}")
    assert template.expand({"id": 7, "scale": 1.5, "exact": True}) == "item/7?scale=1.5&exact=true"


def test_literals_outside_the_uri_syntax_are_percent_encoded() -> None:
    assert UriTemplate("a b/{x}").expand({"x": "é"}) == "a%20b/%C3%A9"


def test_unsupported_values_are_refused() -> None:
    with pytest.raises(TypeError, match="'x'"):
        UriTemplate("{x}").expand({"x": object()})  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        UriTemplate("{x}").expand({"x": b"bytes"})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="prefix"):
        UriTemplate("{x:2}").expand({"x": ["ab", "cd"]})


def test_variables_are_listed_once_in_order() -> None:
    template = UriTemplate("{/var:1,var}{?x,y}{&x}/{+path}")
    assert template.variables == ("var", "x", "y", "path")
    assert UriTemplate("plain://uri").variables == ()


def test_templates_compare_and_hash_by_their_text() -> None:
    assert UriTemplate("a/{b}") == UriTemplate("a/{b}")
    assert len({UriTemplate("a/{b}"), UriTemplate("a/{b}"), UriTemplate("a/{c}")}) == 2
    assert str(UriTemplate("a/{b}")) == "a/{b}"


@pytest.mark.parametrize(
    "template",
    [
        "{",
        "}",
        "a{b",
        "a}b{c}",
        "{}",
        "{x,}",
        "{,x}",
        "{x y}",
        "{=x}",
        "{!x}",
        "{@x}",
        "{|x}",
        "{,x}",
        "{x:0}",
        "{x:10000}",
        "{x:3*}",
        "{x**}",
        "{x.}",
        "{.x..y}",
        "{x%2}",
        "{{x}}",
        "{x-y}",
        "{?}",
    ],
)
def test_malformed_templates_raise_value_error(template: str) -> None:
    with pytest.raises(ValueError, match="Malformed URI template"):
        UriTemplate(template)


# ------------------------------------------------------------------ match


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("test://template/{id}/data", "test://template/42/data", {"id": "42"}),
        ("test://template/{id}/data", "test://template/a%2Fb/data", {"id": "a/b"}),
        ("file:///{+path}", "file:///src/main.rs", {"path": "src/main.rs"}),
        ("file:///{+path}", "file:///my%20dir/a.txt", {"path": "my dir/a.txt"}),
        ("files/{name}.json", "files/a.b.json", {"name": "a.b"}),
        ("{/list*}", "/red/green/blue", {"list": ["red", "green", "blue"]}),
        ("X{.list*}", "X.red.green.blue", {"list": ["red", "green", "blue"]}),
        ("www{.dom*}", "www.example.com", {"dom": ["example", "com"]}),
        ("{;x,y}", ";x=1024;y=768", {"x": "1024", "y": "768"}),
        ("{;x,y}", ";y=768", {"y": "768"}),
        ("{;x,y,empty}", ";x=1024;y=768;empty", {"x": "1024", "y": "768", "empty": ""}),
        ("{;list*}", ";list=red;list=green", {"list": ["red", "green"]}),
        ("search{?q,page}", "search?q=mcp&page=2", {"q": "mcp", "page": "2"}),
        ("search{?q,page}", "search?page=2&q=mcp", {"q": "mcp", "page": "2"}),
        ("search{?q,page}", "search?q=mcp", {"q": "mcp"}),
        ("search{?q,page}", "search", {}),
        ("search{?q,page}", "search?q=a%26b%3Dc", {"q": "a&b=c"}),
        ("s{?q}{&page,size}", "s?size=3&q=x", {"q": "x", "size": "3"}),
        ("?fixed=yes{&x}", "?fixed=yes&x=1024", {"x": "1024"}),
        ("?fixed=yes{&x}", "?fixed=yes", {}),
        ("{?list*}", "?list=red&list=green", {"list": ["red", "green"]}),
        ("{x,y}", "1024,768", {"x": "1024", "y": "768"}),
        ("{/var:1,var}", "/v/value", {"var": "value"}),
        ("{var:3}", "val", {"var": "val"}),
        ("X{#frag}", "X#a/b?c", {"frag": "a/b?c"}),
        ("X{#frag}", "X", {}),
        ("{+path}{?q}", "/a/b?q=1", {"path": "/a/b", "q": "1"}),
        ("a/{x}", "a/", {"x": ""}),
        ("a/{x}", "a/%C3%A9t%C3%A9", {"x": "été"}),
        ("users/{id}/posts/{post}", "users/7/posts/9", {"id": "7", "post": "9"}),
    ],
)
def test_match_gives_back_the_decoded_variables(
    template: str, uri: str, expected: dict[str, Any]
) -> None:
    assert UriTemplate(template).match(uri) == expected


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        ("test://template/{id}/data", "test://template/a/b/data"),
        ("test://template/{id}/data", "test://other/1/data"),
        ("test://template/{id}/data", "test://template/1/data/more"),
        ("search{?q}", "search?q=1&unknown=2"),
        ("search{?q}", "search?q=1&q=2"),
        ("{var:3}", "value"),
        ("{/var:1,var}", "/x/value"),
        ("{x}", "%FF"),
        ("a/{x}", "b/1"),
        ("{;x}", ";y=1"),
    ],
)
def test_match_refuses_uris_the_template_cannot_produce(template: str, uri: str) -> None:
    assert UriTemplate(template).match(uri) is None


def test_too_long_uris_never_match() -> None:
    template = UriTemplate("t://{+x}")
    assert template.match("t://" + "a" * (MAX_MATCH_LENGTH - 4)) is not None
    assert template.match("t://" + "a" * MAX_MATCH_LENGTH) is None


def test_hostile_uris_fail_fast() -> None:
    # Many adjacent and literal-separated variables: a backtracking matcher would take ages.
    template = UriTemplate("t://{a}-{b}-{c}-{d}-{e}.{f}.{+g}/{h}/{i}z")
    uri = "t://" + "-" * (MAX_MATCH_LENGTH // 2) + "/" * (MAX_MATCH_LENGTH // 2 - 10)
    start = time.perf_counter()
    assert template.match(uri) is None
    assert time.perf_counter() - start < 2.0


# ------------------------------------------------------------------ round trip (hypothesis)

# Raw in a value: only letters and digits, plus characters every operator percent-encodes, so
# nothing in an expanded value can be mistaken for a separator or a literal.
_VALUE = st.text(alphabet="abcXYZ019 é/?#&=,;%é€", min_size=1, max_size=8)
_RESERVED_SAFE_VALUE = st.text(alphabet='abcXYZ019 é"<>€', min_size=1, max_size=8)
_LITERAL = st.text(alphabet="-:/!@$()*+", min_size=1, max_size=4)
_NAMES = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"]


@st.composite
def _template_and_values(draw: st.DrawFn) -> tuple[str, dict[str, Any], dict[str, Any]]:
    names = iter(_NAMES)
    text = "t:" + draw(_LITERAL)
    values: dict[str, Any] = {}
    expected: dict[str, Any] = {}
    pieces = draw(st.integers(min_value=1, max_value=4))
    for index in range(pieces):
        op = draw(st.sampled_from(["", "+", "#", ".", "/", ";", "?"]))
        if op == "#" and index != pieces - 1:
            op = "/"
        if op == "?":
            # A query expression (any of its variables may be missing) ends the template.
            specs = []
            for _ in range(draw(st.integers(min_value=1, max_value=3))):
                name = next(names)
                explode = draw(st.booleans())
                specs.append(name + ("*" if explode else ""))
                if draw(st.booleans()):
                    value: Any = (
                        draw(st.lists(_VALUE, min_size=1, max_size=3)) if explode else draw(_VALUE)
                    )
                    values[name] = expected[name] = value
            text += "{?" + ",".join(specs) + "}"
            break
        count = draw(st.integers(min_value=1, max_value=2))
        specs = []
        explode = False
        for position in range(count):
            name = next(names)
            if op in {"", "+", "#"}:
                value = draw(_RESERVED_SAFE_VALUE if op else _VALUE)
                prefix = draw(st.none() | st.integers(min_value=1, max_value=5))
                specs.append(name + (f":{prefix}" if prefix else ""))
                values[name] = value
                expected[name] = value[:prefix] if prefix else value
            else:
                explode = op != ";" and position == count - 1 and draw(st.booleans())
                specs.append(name + ("*" if explode else ""))
                value = draw(st.lists(_VALUE, min_size=1, max_size=3)) if explode else draw(_VALUE)
                values[name] = expected[name] = value
        literal = draw(_LITERAL)
        if explode and op == "/" and literal.startswith("/"):
            # "{/list*}/x" is ambiguous: "/a/b/x" could end the list at "a" or at "b".
            literal = "-" + literal
        text += "{" + op + ",".join(specs) + "}" + literal
    return text, values, expected


@settings(max_examples=300, deadline=None)
@given(_template_and_values())
def test_match_inverts_expand_where_the_template_is_unambiguous(
    case: tuple[str, dict[str, Any], dict[str, Any]],
) -> None:
    text, values, expected = case
    template = UriTemplate(text)
    uri = template.expand(values)
    assert template.match(uri) == expected, (text, uri)
