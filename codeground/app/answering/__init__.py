"""Who answers and how well: the answering model's choice (``choice``), the GGUF models fetched from
the registry (``models``) and the correctness rule of answer benches (``key_facts``)."""
