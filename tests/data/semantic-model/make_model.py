"""Build the tiny test model in this folder: `python make_model.py` (needs onnx, tokenizers).

A word's vector is its concept group's direction (a unit axis) plus small noise taken from a
hash of the word, so words of one group (English and German alike) are near each other and
far from the others. The graph is one Gather from the embedding table (times the attention
mask): the encoder's mean pooling turns it into the mean of the word vectors. Everything is
computed in plain Python from fixed tables, so two runs write identical bytes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

HERE = Path(__file__).parent
DIM = 32
NOISE = 0.25  # a word's noise per dimension lies in [-NOISE/2, NOISE/2]

GROUPS: dict[str, str] = {
    "leisure": "relax relaxing relaxes unwind unwinds unwinding paint paints painted painting landscape "
               "landscapes hobby hobbies weekend weekends leisure watercolor watercolors easel "
               "entspannen entspannt entspannung abschalten malen malt gemalt landschaft landschaften "
               "wochenende wochenenden freizeit aquarell",
    "allergy": "allergy allergies allergic peanut peanuts nut nuts gluten lactose shellfish intolerant "
               "allergie allergien allergisch erdnuss erdnüsse nüsse laktose unverträglich",
    "travel": "travel travels travelling trip trips flight flights fly flew vacation holiday holidays abroad "
              "airport hotel passport reise reisen reist urlaub flug flüge flughafen verreisen hotels",
    "pets": "dog dogs cat cats pet pets puppy kitten vet hund hunde katze katzen haustier haustiere "
            "tierarzt welpe",
    "deploy": "deploy deploys deployed deployment deployments server servers production release releases "
              "rollout kubernetes container containers docker staging bereitstellung produktion ausrollen "
              "ausgerollt",
    "database": "database databases postgres postgresql sqlite sql query queries schema migration migrations "
                "table tables index datenbank datenbanken abfrage abfragen tabelle tabellen",
    "family": "family mother mom father dad sister brother daughter son parents kids children grandmother "
              "familie mutter mama vater papa schwester bruder tochter sohn eltern kinder oma",
    "music": "music guitar piano song songs concert concerts band sing sings singing choir "
             "musik gitarre klavier lied lieder konzert konzerte singen chor",
    "sport": "sport sports run runs running marathon football soccer tennis gym swim swimming cycling "
             "laufen joggen fußball schwimmen radfahren training trainiert",
    "health": "health doctor sick illness medicine headache headaches fever hospital dentist appointment "
              "arzt ärztin krank krankheit gesundheit kopfschmerzen fieber krankenhaus zahnarzt medikament",
}


def vocabulary() -> dict[str, int]:
    vocab = {"[PAD]": 0, "[UNK]": 1}
    for words in GROUPS.values():
        for w in words.split():
            vocab.setdefault(w, len(vocab))
    return vocab


def word_vector(word: str, group: int) -> list[float]:
    noise = hashlib.sha256(word.encode("utf-8")).digest()
    vec = [(noise[i] / 255.0 - 0.5) * NOISE for i in range(DIM)]
    vec[group] += 1.0
    return vec


def table(vocab: dict[str, int]) -> list[list[float]]:
    rows = [[0.0] * DIM for _ in vocab]  # [PAD] and [UNK]: zero (they weigh nothing in the mean)
    for g, words in enumerate(GROUPS.values()):
        for w in words.split():
            if rows[vocab[w]] == [0.0] * DIM:
                rows[vocab[w]] = word_vector(w, g)
    return rows


def write_graph(rows: list[list[float]]) -> None:
    import onnx
    from onnx import TensorProto, helper

    emb = helper.make_tensor("embeddings", TensorProto.FLOAT, [len(rows), DIM], [x for r in rows for x in r])
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [2])
    nodes = [
        helper.make_node("Gather", ["embeddings", "input_ids"], ["gathered"], axis=0),
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask_f", "axes"], ["mask_3d"]),
        helper.make_node("Mul", ["gathered", "mask_3d"], ["last_hidden_state"]),
    ]
    graph = helper.make_graph(
        nodes, "memvault-test-model",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", DIM])],
        initializer=[emb, axes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_model.py")
    model.ir_version = 8  # readable by onnxruntime >= 1.10
    onnx.checker.check_model(model)
    (HERE / "model.onnx").write_bytes(model.SerializeToString(deterministic=True))


def write_tokenizer(vocab: dict[str, int]) -> None:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    (HERE / "tokenizer.json").write_text(tok.to_str(pretty=True) + "\n", encoding="utf-8")


def main() -> None:
    vocab = vocabulary()
    write_graph(table(vocab))
    write_tokenizer(vocab)
    info = {"name": "memvault-test-model", "pooling": "mean", "max_tokens": 64}
    (HERE / "memvault-model.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
