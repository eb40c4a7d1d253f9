from haystack.dataclasses import ByteStream

from codeground.components.chunkers.python_ast import PythonAstChunker
from codeground.components.chunkers.text import PARSED_AS_TEXT
from tests.conftest import SAMPLE_REPO


def chunk(text: str, path: str = "pkg/mod.py", **kwargs):
    src = ByteStream(data=text.encode("utf-8"), mime_type="text/x-python", meta={"file_path": path})
    return PythonAstChunker(**kwargs).run(sources=[src])["documents"]


def sample_records():
    text = (SAMPLE_REPO / "pkg" / "trainer.py").read_text(encoding="utf-8")
    docs = chunk(text, "pkg/trainer.py")
    return text, {
        d.meta["symbol"]: d for d in docs if d.meta["source_type"] != "module" and "body_of" not in d.meta
    }


def test_one_record_per_class_function_and_method_with_class_method_symbols():
    _, records = sample_records()
    assert set(records) == {
        "retry",
        "Trainer",
        "Trainer.__init__",
        "Trainer.fit",
        "Trainer._step",
        "Trainer._documented_private",
        "Trainer.evaluate",
        "Trainer.Config",
        "Trainer.Config.validate",
        "Gemma2DecoderLayer",
        "Gemma2DecoderLayer.forward",
    }


def test_dunders_skipped_except_init():
    _, records = sample_records()
    assert "Trainer.__init__" in records
    assert "Trainer.__repr__" not in records


def test_private_names_kept_only_if_documented_or_taking_arguments():
    _, records = sample_records()
    assert "Trainer._step" in records  # takes an argument
    assert "Trainer._documented_private" in records  # documented
    assert "Trainer._reset" not in records  # neither (self does not count)
    assert "_helper" not in records


def test_all_definitions_keeps_the_code_the_default_rule_leaves_in_no_record():
    text = (SAMPLE_REPO / "pkg" / "trainer.py").read_text(encoding="utf-8")
    default = {d.meta["symbol"] for d in chunk(text, "pkg/trainer.py")}
    every = {d.meta["symbol"]: d for d in chunk(text, "pkg/trainer.py", all_definitions=True)}
    assert {"Trainer.__repr__", "Trainer._reset", "_helper"} <= set(every) - default
    reset = every["Trainer._reset"]
    assert reset.meta["source_type"] == "impl"
    assert text[reset.meta["start_char"] : reset.meta["end_char"]] == reset.content
    assert default <= set(every)  # nothing the default keeps is lost


def test_documented_symbol_embeds_signature_and_docstring_and_carries_impl_in_meta():
    _, records = sample_records()
    fit = records["Trainer.fit"]
    assert fit.meta["source_type"] == "api"
    assert fit.content.lstrip().startswith("@retry(times=2)")  # decorator included in the range
    assert '"""Run ``epochs`` passes over ``data``."""' in fit.content
    assert "self._step(data)" not in fit.content  # the body is not embedded...
    assert "self._step(data)" in fit.meta["impl"]  # ...it travels as meta impl
    assert "impl" not in fit.meta["header"]


def test_documented_symbol_body_is_its_own_impl_record_for_citation():
    text, records = sample_records()
    bodies = [d for d in chunk(text, "pkg/trainer.py") if "body_of" in d.meta]
    fit_body = next(d for d in bodies if d.meta["symbol"] == "Trainer.fit")
    assert fit_body.meta["source_type"] == "impl"
    assert fit_body.meta["body_of"] == records["Trainer.fit"].id
    assert "self._step(data)" in fit_body.content and '"""' not in fit_body.content
    assert fit_body.meta["start_line"] > records["Trainer.fit"].meta["end_line"]
    assert not [d for d in chunk(text, "pkg/trainer.py", body_records=False) if "body_of" in d.meta]


def test_undocumented_symbol_embeds_its_code():
    _, records = sample_records()
    step = records["Trainer._step"]
    assert step.meta["source_type"] == "impl"
    assert "return self.model(batch)" in step.content
    assert "impl" not in step.meta


def test_async_defs_and_nested_classes_are_records():
    _, records = sample_records()
    assert records["Trainer.evaluate"].content.lstrip().startswith("async def evaluate")
    assert records["Trainer.Config"].meta["source_type"] == "api"
    assert records["Trainer.Config.validate"].meta["source_type"] == "impl"


def test_class_record_covers_only_its_own_statements_not_its_methods():
    _, records = sample_records()
    trainer = records["Trainer"]
    assert "learning_rate = 0.1" in trainer.meta["impl"]
    assert "def fit" not in trainer.meta["impl"]


def test_impl_meta_is_capped():
    body = "\n".join(f"    x{i} = {i}" for i in range(3000))
    docs = chunk(f'def big():\n    """Doc."""\n{body}\n', max_impl_chars=500)
    assert len(docs[0].meta["impl"]) == 500


def test_ids_and_ranges_slice_back_to_exact_text():
    text, _ = sample_records()
    for doc in chunk(text, "pkg/trainer.py"):
        assert doc.id == f"pkg/trainer.py:{doc.meta['symbol']}:{doc.meta['start_line']}"
        assert text[doc.meta["start_char"] : doc.meta["end_char"]] == doc.content
        assert text.count("\n", 0, doc.meta["start_char"]) + 1 == doc.meta["start_line"]
        assert text.count("\n", 0, doc.meta["end_char"] - 1) + 1 == doc.meta["end_line"]


def test_non_ascii_columns_map_to_str_offsets():
    text = 'x = "héllo wörld"\n\n\ndef f(a):\n    """Grüße."""\n    return "ünïcode"\n'
    docs = chunk(text)
    for doc in docs:
        assert text[doc.meta["start_char"] : doc.meta["end_char"]] == doc.content
    assert any(d.meta["symbol"] == "f" and d.content.endswith('"""Grüße."""') for d in docs)


def test_module_level_code_becomes_module_records_and_bare_imports_do_not():
    text, _ = sample_records()
    modules = [d for d in chunk(text, "pkg/trainer.py") if d.meta["source_type"] == "module"]
    assert [m.meta["symbol"] for m in modules] == ["pkg.trainer"] * 2
    assert "DEFAULT_EPOCHS = 3" in modules[0].content
    assert 'if __name__ == "__main__":' in modules[-1].content
    only_imports = chunk("import os\nimport sys\n\n\ndef f(x):\n    return x\n")
    assert [d.meta["source_type"] for d in only_imports] == ["impl"]


def test_a_file_of_imports_alone_is_one_module_record_where_the_reexported_name_lives():
    text = "from starlette.middleware.cors import CORSMiddleware as CORSMiddleware  # noqa\n"
    (record,) = chunk(text, "fastapi/middleware/cors.py")
    assert (record.meta["symbol"], record.meta["source_type"]) == ("fastapi.middleware.cors", "module")
    assert record.content == "from starlette.middleware.cors import CORSMiddleware as CORSMiddleware"


def test_a_file_that_does_not_parse_becomes_text_records_counted_and_no_crash():
    good = ByteStream(data=b"def ok(x):\n    return x\n", meta={"file_path": "ok.py"})
    bad = ByteStream(data=b"def broken(:\n    pass\n", meta={"file_path": "bad.py"})
    nul = ByteStream(data=b"x = 1\x00\n", meta={"file_path": "nul.py"})
    out = PythonAstChunker().run(sources=[bad, nul, good])
    assert [(d.meta["file_path"], d.meta["source_type"]) for d in out["documents"]] == [
        ("bad.py", "text"),
        ("nul.py", "text"),
        ("ok.py", "impl"),
    ]
    assert out["failed"] == [["bad.py", PARSED_AS_TEXT], ["nul.py", PARSED_AS_TEXT]]


def test_component_round_trips_through_to_dict():
    from haystack.core.serialization import component_from_dict, component_to_dict

    chunker = PythonAstChunker(max_impl_chars=100, module_records=False)
    data = component_to_dict(chunker, "python")
    again = component_from_dict(PythonAstChunker, data, "python")
    assert (again.max_impl_chars, again.module_records) == (100, False)


def test_bom_and_cr_only_or_mixed_line_endings_are_chunked_with_exact_slices_and_distinct_ids():
    sources = {
        "bom.py": "\ufeffdef bom_f(a):\n    return a\n",
        "cr.py": "def cr_f(a):\r    return a\r\rdef cr_g(b):\r    return b\r",
        "mixed.py": 'def mixed_g(b):\r    """G."""\r    return b\r\n'
        "class K:\n    def m(self, x):\r        return x\n",
    }
    for path, text in sources.items():
        docs = chunk(text, path)
        assert docs, path
        for d in docs:
            assert text[d.meta["start_char"] : d.meta["end_char"]] == d.content, (path, d.id)
        assert len({d.id for d in docs}) == len(docs), [d.id for d in docs]
    assert {d.meta["symbol"] for d in chunk(sources["mixed.py"], "mixed.py")} >= {"mixed_g", "K.m"}
    body = [d for d in chunk(sources["mixed.py"], "mixed.py") if d.meta.get("body_of")]
    assert body and body[0].meta["start_line"] == 3  # a lone CR ends a line, as in Python and editors


def test_a_file_the_chunker_cannot_handle_is_listed_as_failed_not_raised(monkeypatch):
    def boom(*args, **kwargs):
        raise IndexError("unexpected shape")

    monkeypatch.setattr(PythonAstChunker, "_chunk", boom)
    src = ByteStream(data=b"def ok(x):\n    return x\n", meta={"file_path": "ok.py"})
    out = PythonAstChunker().run(sources=[src])
    assert out == {"documents": [], "failed": [["ok.py", "chunker_error"]]}
