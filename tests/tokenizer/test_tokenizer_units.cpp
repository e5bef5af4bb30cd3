// Tokenizer behaviour on small vocabularies written by the test itself.
#include "cairn/error.h"
#include "cairn/gguf.h"
#include "cairn/tokenizer.h"

#include <QTest>

using namespace cairn;

namespace {

// GPT-2's byte -> code point table, written out independently of the engine.
std::string byteLevel(unsigned char b) {
    uint32_t cp = b;
    if (!((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE))) {
        uint32_t n = 0;
        for (unsigned x = 0; x < b; ++x)
            if (!((x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE))) ++n;
        cp = 256 + n;
    }
    std::string s;
    if (cp < 0x80) s += char(cp);
    else { s += char(0xC0 | (cp >> 6)); s += char(0x80 | (cp & 0x3F)); }
    return s;
}

struct Vocab {
    std::vector<std::uint8_t> bytes;
    gguf::File file;
};

// SentencePiece: <unk> <s> </s>, 256 byte tokens, then a few pieces.
std::vector<std::uint8_t> spmVocab() {
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<int32_t> types = {2, 3, 3};
    for (int b = 0; b < 256; ++b) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "<0x%02X>", b);
        tokens.push_back(buf);
        types.push_back(6);
    }
    for (const char* p : {"\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a", "ab", "\xE2\x96\x81" "ab"}) {
        tokens.push_back(p);
        types.push_back(1);
    }
    std::vector<float> scores(tokens.size(), 0.f);
    for (size_t i = 259; i < tokens.size(); ++i) scores[i] = -float(i - 259);  // earlier pieces merge first
    gguf::Writer w;
    w.setString("general.architecture", "llama");
    w.setString("tokenizer.ggml.model", "llama");
    w.setStrings("tokenizer.ggml.tokens", tokens);
    w.setFloats("tokenizer.ggml.scores", scores);
    w.setInt32s("tokenizer.ggml.token_type", types);
    w.setUInt32("tokenizer.ggml.bos_token_id", 1);
    w.setUInt32("tokenizer.ggml.eos_token_id", 2);
    return w.toBytes();
}

// Byte-level BPE: 256 byte tokens (id = byte), "ab" and "bc", ChatML control tokens.
std::vector<std::uint8_t> bpeVocab(const std::vector<std::string>& merges) {
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    for (int b = 0; b < 256; ++b) {
        tokens.push_back(byteLevel(uint8_t(b)));
        types.push_back(1);
    }
    for (const char* t : {"ab", "bc", "<|im_start|>", "<|im_end|>", "<|endoftext|>"}) {
        tokens.push_back(t);
        types.push_back(tokens.back()[0] == '<' ? 3 : 1);
    }
    gguf::Writer w;
    w.setString("general.architecture", "qwen2");
    w.setString("tokenizer.ggml.model", "gpt2");
    w.setString("tokenizer.ggml.pre", "qwen2");
    w.setStrings("tokenizer.ggml.tokens", tokens);
    w.setInt32s("tokenizer.ggml.token_type", types);
    w.setStrings("tokenizer.ggml.merges", merges);
    w.setUInt32("tokenizer.ggml.bos_token_id", 260);
    w.setUInt32("tokenizer.ggml.eos_token_id", 260);
    return w.toBytes();
}

constexpr int32_t kAb = 256, kBc = 257, kImStart = 258, kImEnd = 259, kEndOfText = 260;

std::unique_ptr<Tokenizer> load(const std::vector<std::uint8_t>& bytes) {
    auto file = gguf::File::fromMemory(bytes.data(), bytes.size(), "memory");
    return Tokenizer::fromGguf(file);  // the tokenizer copies what it needs
}

bool validUtf8(const std::string& s) {
    size_t i = 0;
    while (i < s.size()) {
        auto c = static_cast<unsigned char>(s[i]);
        int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + size_t(n) > s.size()) return false;
        for (int k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(s[i + size_t(k)]) & 0xC0) != 0x80) return false;
        i += size_t(n);
    }
    return true;
}

} // namespace

class TestTokenizerUnits : public QObject {
    Q_OBJECT
private slots:
    void spmByteFallbackAndStreaming() {
        auto bytes = spmVocab();
        auto tok = load(bytes);
        QCOMPARE(tok->kind(), std::string("spm"));
        QVERIFY(tok->addBos());
        const std::string text = "ab \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";  // "ab é€😀": no pieces for these
        auto ids = tok->encode(text, false, false);
        // ▁ab, ▁, then one byte token per byte of the 2+3+4-byte characters.
        QCOMPARE(ids.size(), size_t(2 + 9));
        QCOMPARE(tok->tokenText(ids[0]), std::string_view("\xE2\x96\x81" "ab"));
        for (size_t i = 2; i < ids.size(); ++i) QCOMPARE(tok->tokenBytes(ids[i]).size(), size_t(1));
        QCOMPARE(tok->decode(ids), text);

        StreamDecoder stream(*tok);
        std::string all;
        for (size_t i = 0; i < ids.size(); ++i) {
            std::string out = stream.push(ids[i]);
            QVERIFY2(validUtf8(out), ("piece " + std::to_string(i) + " splits a character").c_str());
            all += out;
        }
        all += stream.flush();
        QCOMPARE(all, " " + text);  // the stream keeps the prefix space; decode() drops it
        // The first bytes of a character give nothing until it is complete.
        StreamDecoder partial(*tok);
        // ids: ▁ab ▁ C3 A9 E2 82 AC F0 9F 98 80
        QCOMPARE(partial.push(ids[4]), std::string());  // 0xE2 of €
        QCOMPARE(partial.push(ids[5]), std::string());  // 0x82
        QCOMPARE(partial.push(ids[6]), std::string("\xE2\x82\xAC"));
        QCOMPARE(partial.push(ids[7]), std::string());  // 0xF0 of 😀
        QCOMPARE(partial.flush(), std::string("\xF0"));
    }

    void spmSpacePrefixFollowsSpecialTokens() {
        auto bytes = spmVocab();
        auto tok = load(bytes);
        const int32_t spaceA = tok->findToken("\xE2\x96\x81" "a");
        QVERIFY(spaceA > 0);
        // BOS is added by the flag; each fragment after a control token gets a space, as in llama.cpp.
        auto ids = tok->encode("a</s>a", true, true);
        QCOMPARE(ids, (std::vector<int32_t>{1, spaceA, 2, spaceA}));
        // Without special parsing "</s>" is plain text, never the control token.
        auto plain = tok->encode("a</s>a", false, false);
        QVERIFY(std::find(plain.begin(), plain.end(), 2) == plain.end());
        QCOMPARE(tok->decode(plain), std::string("a</s>a"));
        QVERIFY(tok->isControl(2));
        QVERIFY(tok->isEndOfGeneration(2));
        QCOMPARE(tok->tokenBytes(2), std::string());
    }

    void bpeMergesByRank() {
        auto lowFirst = load(bpeVocab({"a b", "b c"}));
        QCOMPARE(lowFirst->encode("abc", false, false), (std::vector<int32_t>{kAb, 'c'}));
        auto highFirst = load(bpeVocab({"b c", "a b"}));
        QCOMPARE(highFirst->encode("abc", false, false), (std::vector<int32_t>{'a', kBc}));
        QCOMPARE(highFirst->decode(highFirst->encode("abc", false, false)), std::string("abc"));
    }

    void bpeControlTokensOnlyWhenAsked() {
        auto tok = load(bpeVocab({"a b"}));
        QCOMPARE(tok->kind(), std::string("bpe"));
        QVERIFY(!tok->addBos());
        const std::string text = "<|im_start|>user\nab<|im_end|>";
        auto plain = tok->encode(text, false, false);
        for (int32_t id : plain) QVERIFY(!tok->isControl(id));
        QCOMPARE(tok->decode(plain), text);
        auto special = tok->encode(text, false, true);
        QCOMPARE(special.front(), kImStart);
        QCOMPARE(special.back(), kImEnd);
        QVERIFY(std::find(special.begin(), special.end(), kAb) != special.end());
        QVERIFY(tok->isEndOfGeneration(kImEnd));
        QVERIFY(tok->isEndOfGeneration(kEndOfText));
        QVERIFY(!tok->isEndOfGeneration(kImStart));
        QCOMPARE(tok->eot(), kImEnd);
    }

    void bpeStreamingNeverSplitsCharacters() {
        auto tok = load(bpeVocab({"a b"}));
        const std::string text = "a\xE2\x82\xAC\xF0\x9F\x98\x80" "b";
        auto ids = tok->encode(text, false, false);
        QCOMPARE(ids.size(), size_t(1 + 3 + 4 + 1));  // every byte of € and 😀 is its own token
        StreamDecoder stream(*tok);
        std::string all;
        std::vector<std::string> outs;
        for (int32_t id : ids) {
            outs.push_back(stream.push(id));
            QVERIFY(validUtf8(outs.back()));
            all += outs.back();
        }
        all += stream.flush();
        QCOMPARE(all, text);
        QCOMPARE(outs[3], std::string("\xE2\x82\xAC"));
    }

    void invalidUtf8BecomesReplacementCharacter() {
        auto tok = load(bpeVocab({"a b"}));
        auto ids = tok->encode("a\xFF" "b", false, false);
        QCOMPARE(tok->decode(ids), std::string("a\xEF\xBF\xBD" "b"));  // as llama.cpp does
    }

    void badInputGivesErrors() {
        auto tok = load(bpeVocab({"a b"}));
        QVERIFY_THROWS_EXCEPTION(Error, tok->tokenBytes(tok->vocabSize()));
        QVERIFY_THROWS_EXCEPTION(Error, tok->tokenText(-1));
        std::vector<int32_t> bad = {0, 1 << 30};
        QVERIFY_THROWS_EXCEPTION(Error, tok->decode(bad));

        gguf::Writer none;
        none.setString("general.architecture", "llama");
        auto noTokenizer = none.toBytes();
        QVERIFY_THROWS_EXCEPTION(Error, load(noTokenizer));

        gguf::Writer shortScores;
        shortScores.setString("tokenizer.ggml.model", "llama");
        shortScores.setStrings("tokenizer.ggml.tokens", {"<unk>", "a"});
        shortScores.setFloats("tokenizer.ggml.scores", {0.f});
        QVERIFY_THROWS_EXCEPTION(Error, load(shortScores.toBytes()));

        gguf::Writer unknownPre;
        unknownPre.setString("tokenizer.ggml.model", "gpt2");
        unknownPre.setString("tokenizer.ggml.pre", "no-such-pre-tokenizer");
        unknownPre.setStrings("tokenizer.ggml.tokens", {"a"});
        unknownPre.setStrings("tokenizer.ggml.merges", {});
        QVERIFY_THROWS_EXCEPTION(Error, load(unknownPre.toBytes()));

        gguf::Writer noMerges;
        noMerges.setString("tokenizer.ggml.model", "gpt2");
        noMerges.setStrings("tokenizer.ggml.tokens", {"a"});
        QVERIFY_THROWS_EXCEPTION(Error, load(noMerges.toBytes()));

        gguf::Writer otherModel;
        otherModel.setString("tokenizer.ggml.model", "bert");
        otherModel.setStrings("tokenizer.ggml.tokens", {"a"});
        QVERIFY_THROWS_EXCEPTION(Error, load(otherModel.toBytes()));
    }
};

QTEST_APPLESS_MAIN(TestTokenizerUnits)
#include "test_tokenizer_units.moc"
