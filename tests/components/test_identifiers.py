from codeground.components.identifiers import identifier_candidates, tokenize


def test_snake_case_yields_whole_and_parts():
    assert tokenize("trust_remote_code") == ["trust_remote_code", "trust", "remote", "code"]


def test_camel_case_split_before_lowercasing():
    assert tokenize("Gemma2DecoderLayer") == ["gemma2decoderlayer", "gemma2", "decoder", "layer"]


def test_acronyms_split_at_the_next_word():
    assert tokenize("LLMEngine HTTPServer") == ["llmengine", "llm", "engine", "httpserver", "http", "server"]


def test_plain_words_are_lowercased_once():
    assert tokenize("Load the Model") == ["load", "the", "model"]


def test_dotted_names_split_at_dots():
    assert tokenize("nn.Module.forward") == ["nn", "module", "forward"]


def test_identifier_candidates_keep_dotted_paths_and_their_parts():
    cands = identifier_candidates("How does LLMEngine.add_request work?")
    assert "LLMEngine.add_request" in cands
    assert "LLMEngine" in cands and "add_request" in cands


# -- "looks like code": one rule for symbol lookup, the grounding check and the chat's marking --------
import pytest  # noqa: E402
from haystack import Document  # noqa: E402

from codeground.app.serve.ui_format import mark_unknown  # noqa: E402
from codeground.components.grounding.extract import extract_identifiers  # noqa: E402
from codeground.components.identifiers import looks_like_code  # noqa: E402
from codeground.components.retrievers.symbol_lookup import SymbolRetriever  # noqa: E402
from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore  # noqa: E402

WORDS = {
    "trust_remote_code": True,
    "LLMEngine": True,
    "SamplingParams": True,
    "Qwen2Model": True,
    "vllm.LLM": True,
    "Trainer.fit": True,
    "_private_fn": True,
    "Gemma2": False,
    "LLMs": False,
    "GPU": False,
    "fit": False,
    "The": False,
    "_private": False,
}


@pytest.mark.parametrize(("word", "code"), WORDS.items())
def test_looks_like_code_is_one_answer_per_word(word, code):
    assert looks_like_code(word) is code


def test_symbol_lookup_grounding_check_and_chat_marking_agree_on_what_looks_like_code():
    words = [w for w in WORDS if "." not in w]
    store = SQLiteBM25DocumentStore()
    store.write_documents(
        [
            Document(
                id=w,
                content=f"def {w}(): ...",
                meta={"symbol": w, "source_type": "impl", "file_path": "m.py", "start_line": 1},
            )
            for w in words
        ]
    )
    looked_up = {
        d.id for d in SymbolRetriever(document_store=store, top_k=20).run(query=" ".join(words))["documents"]
    }
    extracted = set(extract_identifiers(" ".join(words) + "."))
    marked = {w for w in words if "cg-unknown" in mark_unknown(f"Use {w} now.", [w])}
    expected = {w for w in words if WORDS[w]}
    assert looked_up == expected
    assert extracted == expected
    assert marked == expected


def test_other_languages_member_separators_read_as_the_dot_of_a_symbol():
    from codeground.components.identifiers import identifier_candidates

    found = identifier_candidates("Does `Vec::with_capacity` differ from Point::new or List#add?")
    assert {"Vec.with_capacity", "Point.new", "List.add", "with_capacity", "new", "add"} <= set(found)
    assert "a.b" not in identifier_candidates("x[a::2] and issue #12")  # slices and hashes are not members


def test_a_name_prose_hyphenates_before_its_number_also_yields_the_code_spelling():
    # "GPT-2" in a question meets GPT2LMHeadModel's part "gpt2"; a range or an identifier is no such name
    assert "gpt2" in tokenize("Which architectures support GPT-2 models?")
    assert "gpt2" in tokenize("class GPT2LMHeadModel")
    assert "llama3" in tokenize("Llama-3.1 and Llama-3")
    assert "x1" not in tokenize("x-1-2")  # a longer hyphenated run is no such name
    assert "a1" not in tokenize("my_a-1")


def test_pythons_constructor_as_prose_names_it_yields_the_token_of_init():
    # "initialization" / "constructor" in a question meet `__init__`, which yields its bare name
    assert "init" in tokenize("What is the default in NemotronVL's initialization?")
    for word in ("constructor", "Constructors", "initialize", "initialized", "initializer", "initialise"):
        assert tokenize(word) == [word.lower(), "init"]
    assert tokenize("def __init__(self):") == ["def", "__init__", "init", "self"]
    assert tokenize("__call__ __getitem__") == ["__call__", "call", "__getitem__", "getitem"]
    assert tokenize("initial initiative") == ["initial", "initiative"]  # other words stay words
    assert tokenize("__get_item__") == ["__get_item__", "get", "item"]  # a compound keeps its parts


def test_a_question_spells_out_a_word_and_also_asks_for_the_short_form_code_writes():
    from codeground.components.identifiers import query_tokens

    assert query_tokens("the configuration directory of maxNumberOfSequences") == [
        "the",
        "configuration",
        "config",
        "directory",
        "dir",
        "of",
        "maxnumberofsequences",
        "max",
        "number",
        "num",
        "of",
        "sequences",
        "seq",
    ]
    assert "config" not in tokenize("the configuration directory")  # records keep tokenize's tokens


def test_no_short_form_is_a_reserved_word_of_the_five_languages():
    import keyword

    from codeground.components.abbreviations import GROUPS

    go = "break case chan const continue default defer else fallthrough for func go goto if import "
    go += "interface map package range return select struct switch type var"
    rust = "as async await break const continue crate dyn else enum extern false fn for if impl in let "
    rust += "loop match mod move mut pub ref return self static struct super trait true type unsafe use "
    rust += "where while"
    java = "abstract assert boolean break byte case catch char class const continue default do double "
    java += "else enum extends final finally float for goto if implements import instanceof int interface "
    java += "long native new package private protected public return short static super switch "
    java += "synchronized this throw throws transient try void volatile while var"
    js = "break case catch class const continue debugger default delete do else export extends finally "
    js += "for function if import in instanceof let new return super switch this throw try typeof var "
    js += "void while with yield async await"
    reserved = set(keyword.kwlist) | set(f"{go} {rust} {java} {js}".split())
    # a keyword stands in nearly every definition: "a completion function" asking for Go's `func`
    assert not reserved & set(GROUPS)
