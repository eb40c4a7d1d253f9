import pytest
from haystack import Document

from codeground.components.file_ranking.path_roles import PathRolePrior, is_test_path


def _docs(*paths, kind="api"):
    return [
        Document(id=p, content=p, score=1.0 - i * 0.01, meta={"file_path": p, "source_type": kind})
        for i, p in enumerate(paths)
    ]


def _order(query, docs, **kwargs):
    return [d.id for d in PathRolePrior(**kwargs).run(query=query, documents=docs)["documents"]]


@pytest.mark.parametrize(
    "path",
    [
        "pkg/router_test.go",
        "spec/models/user_spec.rb",
        "src/FooTest.php",
        "tests/test_app.py",
        "lib/__tests__/a.js",
        "src/test/java/AppTest.java",
        "test_util.py",
    ],
)
def test_each_language_s_test_layout_and_test_folders_are_tests(path):
    assert is_test_path(path)


@pytest.mark.parametrize(
    "path", ["pkg/router.go", "app/models/user.rb", "src/attestation.py", "contest/run.py"]
)
def test_source_files_are_not_tests(path):
    assert not is_test_path(path)


def test_tests_examples_legacy_entry_and_declaration_files_follow_the_code_of_a_similar_score():
    docs = _docs(
        "tests/test_cors.py", "examples/cors_app.py", "pkg/compat/cors.py", "types/cors.d.ts", "pkg/cors.py"
    )
    docs[1:1] = _docs("pkg/__init__.py", kind="module")
    assert _order("How does the CORS middleware work?", docs)[0] == "pkg/cors.py"


def test_a_definition_in_an_entry_file_is_not_pushed_down_its_module_text_is():
    docs = _docs("pkg/__init__.py", "pkg/utils.py")
    assert _order("How is shared memory measured?", docs) == ["pkg/__init__.py", "pkg/utils.py"]
    docs = _docs("pkg/__init__.py", kind="module") + _docs("pkg/utils.py")
    assert _order("How is shared memory measured?", docs) == ["pkg/utils.py", "pkg/__init__.py"]


def test_a_question_about_tests_or_examples_keeps_them_where_they_were():
    docs = _docs("tests/test_cors.py", "pkg/cors.py")
    assert _order("How is CORS tested?", docs) == ["tests/test_cors.py", "pkg/cors.py"]
    docs = _docs("examples/cors_app.py", "pkg/cors.py")
    assert _order("Show an example of CORS", docs) == ["examples/cors_app.py", "pkg/cors.py"]


def test_a_version_folder_yields_only_to_a_higher_sibling_among_the_candidates():
    docs = _docs("src/v3/types.ts", "src/v4/types.ts")
    assert _order("How are object types parsed?", docs) == ["src/v4/types.ts", "src/v3/types.ts"]
    # a lone v1/ (vLLM's current engine beside the older code at the root) is not legacy
    docs = _docs("vllm/v1/engine/core.py", "vllm/engine/llm_engine.py")
    assert _order("How does the engine core step?", docs) == [
        "vllm/v1/engine/core.py",
        "vllm/engine/llm_engine.py",
    ]


def test_documentation_is_never_pushed_down():
    docs = _docs("examples/README.md", kind="docs") + _docs("pkg/cors.py")
    out = PathRolePrior().run(query="How do I run it?", documents=docs)["documents"]
    assert [d.id for d in out] == ["examples/README.md", "pkg/cors.py"] and out[0].score == 1.0


def test_inputs_are_not_mutated():
    docs = _docs("tests/test_a.py", "pkg/a.py")
    PathRolePrior().run(query="q", documents=docs)
    assert [d.score for d in docs] == [1.0, 0.99]


@pytest.mark.parametrize("bad", [0, 1.5, -1])
def test_a_factor_outside_zero_to_one_is_refused(bad):
    with pytest.raises(ValueError, match="tests must be in"):
        PathRolePrior(tests=bad)


def test_a_folder_named_sample_is_code_not_an_example():
    docs = _docs("vllm/v1/sample/rejection_sampler.py", "vllm/spec_decode/eagle.py")
    assert _order("How does the rejection sampler work?", docs) == [
        "vllm/v1/sample/rejection_sampler.py",
        "vllm/spec_decode/eagle.py",
    ]


def test_an_identifier_written_only_in_examples_and_tests_keeps_their_records_in_place():
    docs = [
        Document(id="code", content="class C0: pass", score=0.43, meta={"file_path": "pkg/nested.py"}),
        Document(id="nb", content="no_kernel_call()", score=0.45, meta={"file_path": "nb/tour.ipynb"}),
        Document(id="t", content="no_kernel_call()", score=0.44, meta={"file_path": "tests/test_a.py"}),
    ]
    assert _order("no_kernel_call", docs) == ["nb", "t", "code"]  # nothing of the code to yield to
    defined = Document(
        id="def", content="def no_kernel_call(): ...", score=0.40, meta={"file_path": "pkg/calls.py"}
    )
    assert _order("no_kernel_call", [*docs, defined]) == ["code", "def", "nb", "t"]  # the code writes it
