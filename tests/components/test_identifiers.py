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
