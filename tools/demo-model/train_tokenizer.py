#!/usr/bin/python3
"""SentencePiece BPE tokenizer for the demo models.

  train_tokenizer.py OUT_DIR [--vocab 2048]

Trained on the user and assistant texts of OUT_DIR/train.jsonl; writes
OUT_DIR/tokenizer.model. Settings match how llama.cpp (and Cairn) run an SPM
vocabulary from GGUF: BPE merges by score, identity normalizer, no dummy
prefix (the runtime adds the prefix space to each text fragment itself), no
whitespace squeezing, byte fallback for anything unseen, digits split so
numbers are spelled digit by digit. <unk>=0, <s>=1, </s>=2, then the ChatML
control tokens <|im_start|>=3, <|im_end|>=4.
"""
import argparse
import json

import sentencepiece as spm


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--vocab", type=int, default=2048)
    args = ap.parse_args()
    lines = []
    with open(f"{args.out}/train.jsonl") as f:
        for line in f:
            for q, a in json.loads(line)["turns"]:
                # Runtime fragments are " user\n" + q and " assistant\n" + a. No newline is
                # in the training text, so "\n" is the byte token <0x0A>, which no merge
                # crosses: a reply tokenizes the same alone as inside the whole prompt.
                lines += [q, a]
    lines += [" user", " assistant"] * 1000
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_prefix=f"{args.out}/tokenizer", model_type="bpe",
        vocab_size=args.vocab, character_coverage=1.0, byte_fallback=True, split_digits=True,
        normalization_rule_name="identity", add_dummy_prefix=False, remove_extra_whitespaces=False,
        split_by_whitespace=True, allow_whitespace_only_pieces=True,
        unk_id=0, bos_id=1, eos_id=2, pad_id=-1, control_symbols=["<|im_start|>", "<|im_end|>"],
        input_sentence_size=0, num_threads=2, 
        minloglevel=2)
    print("wrote", f"{args.out}/tokenizer.model")


if __name__ == "__main__":
    main()
