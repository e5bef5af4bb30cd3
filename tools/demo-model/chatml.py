"""Tokenization of ChatML text the way llama.cpp / Cairn tokenize it with an SPM
vocabulary: control-token text is split out, every text fragment at the start
or after a special token gets one prefix space, BOS first (add_bos)."""
import re

import sentencepiece as spm

SPECIALS = ["<|im_start|>", "<|im_end|>"]
_SPLIT = re.compile("(" + "|".join(re.escape(s) for s in SPECIALS) + ")")


class ChatTokenizer:
    def __init__(self, path):
        self.sp = spm.SentencePieceProcessor(model_file=path)
        self.bos, self.eos = self.sp.bos_id(), self.sp.eos_id()
        self.im_start = self.sp.piece_to_id("<|im_start|>")
        self.im_end = self.sp.piece_to_id("<|im_end|>")

    def encode(self, text, bos=True):
        ids = [self.bos] if bos else []
        for part in _SPLIT.split(text):
            if not part:
                continue
            if part in SPECIALS:
                ids.append(self.sp.piece_to_id(part))
            else:
                ids.extend(self.sp.encode(" " + part))
        return ids

    def decode(self, ids):
        return self.sp.decode([i for i in ids if i not in (self.bos, self.eos, self.im_start, self.im_end)])

    def dialogue(self, turns):
        """Ids of a whole dialogue and a 0/1 mask of the assistant tokens (answer + <|im_end|>)."""
        ids, mask = [self.bos], [0]
        for q, a in turns:
            p = self.encode(f"<|im_start|>user\n{q}<|im_end|>\n<|im_start|>assistant\n", bos=False)
            # what the model generates after the prompt; equal to the whole-text encoding
            # because the newline byte token ends every merge (see train_tokenizer.py)
            r = self.sp.encode(a) + [self.im_end]
            nl = self.encode("\n", bos=False)
            ids += p + r + nl
            mask += [0] * len(p) + [1] * len(r) + [0] * len(nl)
        return ids, mask
