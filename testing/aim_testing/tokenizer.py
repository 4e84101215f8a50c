"""A tiny word-level tokenizer built locally, so benchmark tools never reach the Hub.

:func:`write_tokenizer` saves a Hugging Face *fast* tokenizer directory (``tokenizer.json``,
``tokenizer_config.json``, ``special_tokens_map.json``) that ``AutoTokenizer.from_pretrained(dir)``
loads offline: whitespace pre-tokenizer, a small vocabulary, every other word ``[UNK]``. One word
is one token, so token counts equal word counts (what :mod:`aim_testing.openai_server` reports).
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["write_tokenizer"]

_WORDS = ("the", "a", "of", "and", "to", "in", "tok", "is", "that", "it")


def write_tokenizer(directory: Path) -> Path:
    """Write the tokenizer into ``directory`` (created) and return it."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    directory.mkdir(parents=True, exist_ok=True)
    vocab = {"[UNK]": 0, "[PAD]": 1, "<s>": 2, "</s>": 3} | {w: i + 4 for i, w in enumerate(_WORDS)}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.save(str(directory / "tokenizer.json"))
    special = {"unk_token": "[UNK]", "pad_token": "[PAD]", "bos_token": "<s>", "eos_token": "</s>"}
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 1_000_000} | special
    (directory / "tokenizer_config.json").write_text(json.dumps(config))
    (directory / "special_tokens_map.json").write_text(json.dumps(special))
    return directory
