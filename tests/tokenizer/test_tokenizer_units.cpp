// Tokenizer behaviour on small vocabularies written by the test itself.
#include "cairn/error.h"
#include "cairn/gguf.h"
#include "cairn/tokenizer.h"
#include "written_vocabs.h"

#include <QTest>

#include <random>

using namespace cairn;
using namespace cairn::test;

namespace {

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

}  // namespace

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
        QCOMPARE(tok->tokenText(ids[0]),
                 std::string_view("\xE2\x96\x81"
                                  "ab"));
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
        const int32_t spaceA = tok->findToken("\xE2\x96\x81"
                                              "a");
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

    void spmMalformedByteTokensAreInert() {
        // Byte-typed tokens whose text names no byte (once read out of bounds when
        // the vocabulary also had all 256 real ones): they load, stand for no
        // bytes and are never produced; the real byte tokens still do the fallback.
        std::vector<std::string> bad = {"<0xZZ>", "<0x>",    "<0x-1>", "<0x+1>", "<0x 1>",
                                        "<0x1G>", "<0x123>", "<0xff>", "<>"};
        auto bytes = spmVocab();
        auto file = gguf::File::fromMemory(bytes.data(), bytes.size(), "spm");
        gguf::Writer w;
        for (const auto& v : file.metadata()) w.copyValue(v);
        const auto views = file.find("tokenizer.ggml.tokens")->strings();
        std::vector<std::string> tokens(views.begin(), views.end());
        std::vector<int32_t> types;
        for (double t : file.find("tokenizer.ggml.token_type")->numbers()) types.push_back(int32_t(t));
        std::vector<float> scores;
        for (double s : file.find("tokenizer.ggml.scores")->numbers()) scores.push_back(float(s));
        const int32_t firstBad = int32_t(tokens.size());
        for (const auto& t : bad) {
            tokens.push_back(t);
            types.push_back(6);
            scores.push_back(-100.f);
        }
        w.setStrings("tokenizer.ggml.tokens", tokens);
        w.setInt32s("tokenizer.ggml.token_type", types);
        w.setFloats("tokenizer.ggml.scores", scores);
        auto tok = load(w.toBytes());
        for (int32_t id = firstBad; id < int32_t(tokens.size()); ++id)
            QCOMPARE(tok->tokenBytes(id), tokens[size_t(id)] == "<0xff>" ? std::string("\xFF") : std::string());
        // "<0xff>" is well formed (it stands for 0xFF), but byte 0xFF already has its token (<0xFF>, id 3 + 255).
        const std::string text = "a\x01\xC3\xA9<0xZZ><0x-1>";  // é: no piece, two byte tokens
        auto ids = tok->encode(text, false, false);
        for (int32_t id : ids) QVERIFY2(id < firstBad, std::to_string(id).c_str());
        QVERIFY(std::find(ids.begin(), ids.end(), 3 + 0x01) != ids.end());
        QVERIFY(std::find(ids.begin(), ids.end(), 3 + 0xC3) != ids.end());
        QCOMPARE(tok->decode(ids), text);
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

    void plainSpansKeepControlTextPlain() {
        auto tok = load(bpeVocab({"a b"}));
        // <|im_start|> | ab<|im_end|> (plain) | <|im_end|>
        const std::string text = "<|im_start|>ab<|im_end|><|im_end|>";
        const std::vector<TextSpan> content = {{12, 24}};
        auto ids = tok->encode(text, false, content);
        QCOMPARE(ids.front(), kImStart);
        QCOMPARE(ids[1], kAb);
        QCOMPARE(ids.back(), kImEnd);
        QCOMPARE(std::count(ids.begin(), ids.end(), kImEnd), 1);
        QCOMPARE(tok->decode(ids), std::string("ab<|im_end|>"));  // control tokens decode to nothing
        // A control token reaching into a plain span by one byte is plain too; a later one still counts.
        auto edge = tok->encode("<|im_end|><|im_end|>", false, std::vector<TextSpan>{{9, 10}});
        QCOMPARE(edge.back(), kImEnd);
        QCOMPARE(std::count(edge.begin(), edge.end(), kImEnd), 1);
        QCOMPARE(edge.size(), size_t(1 + 10));
        // Without spans, and for text without control-token text, nothing changes.
        QCOMPARE(tok->encode(text, false, std::vector<TextSpan>{}), tok->encode(text, false, true));
        QCOMPARE(tok->encode("xabcab", false, std::vector<TextSpan>{{1, 3}, {4, 6}}),
                 tok->encode("xabcab", false, true));
        // parsedSpecials: what and where.
        auto found = tok->parsedSpecials(text, content);
        QCOMPARE(found.size(), size_t(2));
        QCOMPARE(found[0].id, kImStart);
        QCOMPARE(found[0].text, (TextSpan{0, 12}));
        QCOMPARE(found[1].id, kImEnd);
        QCOMPARE(found[1].text, (TextSpan{24, 34}));
        QCOMPARE(tok->parsedSpecials(text).size(), size_t(3));

        // SPM: </s> inside the span is text; the space prefix follows the real special tokens only.
        auto spm = load(spmVocab());
        auto sids = spm->encode("a</s>a</s>", false, std::vector<TextSpan>{{1, 5}});
        QCOMPARE(std::count(sids.begin(), sids.end(), 2), 1);
        QCOMPARE(sids.back(), 2);
        QCOMPARE(spm->decode(sids), std::string("a</s>a"));
    }

    void bpeStreamingNeverSplitsCharacters() {
        auto tok = load(bpeVocab({"a b"}));
        const std::string text = "a\xE2\x82\xAC\xF0\x9F\x98\x80"
                                 "b";
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
        auto ids = tok->encode("a\xFF"
                               "b",
                               false, false);
        QCOMPARE(tok->decode(ids),
                 std::string("a\xEF\xBF\xBD"
                             "b"));  // as llama.cpp does
    }

    // Any well-formed UTF-8 text comes back unchanged; any byte string encodes without error.
    void randomTextRoundTrips() {
        auto spmBytes = spmVocab();
        auto bpeBytes = bpeVocab({"a b", "b c"});
        auto spm = load(spmBytes);
        auto bpe = load(bpeBytes);
        std::mt19937 rng(1234);
        const std::vector<uint32_t> alphabet = {'a', 'b', 'c',  ' ',    ' ',    '\n',    '\t',   '<',   '|',   '>',
                                                '0', '7', 0xE9, 0x20AC, 0x4E2D, 0x1F600, 0x2581, 0x120, 0xFFFD};
        for (int round = 0; round < 300; ++round) {
            std::string text;
            int n = int(rng() % 40);
            for (int i = 0; i < n; ++i) {
                uint32_t cp = alphabet[rng() % alphabet.size()];
                if (cp < 0x80) text += char(cp);
                else if (cp < 0x800) {
                    text += char(0xC0 | (cp >> 6));
                    text += char(0x80 | (cp & 0x3F));
                } else if (cp < 0x10000) {
                    text += char(0xE0 | (cp >> 12));
                    text += char(0x80 | ((cp >> 6) & 0x3F));
                    text += char(0x80 | (cp & 0x3F));
                } else {
                    text += char(0xF0 | (cp >> 18));
                    text += char(0x80 | ((cp >> 12) & 0x3F));
                    text += char(0x80 | ((cp >> 6) & 0x3F));
                    text += char(0x80 | (cp & 0x3F));
                }
            }
            // SPM cannot tell a written U+2581 from an escaped space.
            if (text.find("\xE2\x96\x81") == std::string::npos)
                QCOMPARE(spm->decode(spm->encode(text, false, false)), text);
            QCOMPARE(bpe->decode(bpe->encode(text, false, false)), text);
            std::string noise;
            for (int i = 0; i < n; ++i) noise += char(rng() & 0xFF);
            auto a = spm->encode(noise, true, true);
            auto b = bpe->encode(noise, true, true);
            QVERIFY(validUtf8(bpe->decode(b)));  // invalid bytes became U+FFFD
            QVERIFY(!a.empty() || noise.empty());
        }
    }

    // Without token types every token is normal; the unknown id (default 0) stays unknown.
    void spmWithoutTokenTypes() {
        gguf::Writer w;
        w.setString("tokenizer.ggml.model", "llama");
        w.setStrings("tokenizer.ggml.tokens",
                     {"<unk>", "<s>", "</s>", "\xE2\x96\x81", "a",
                      "\xE2\x96\x81"
                      "a"});
        w.setFloats("tokenizer.ggml.scores", {0.f, 0.f, 0.f, -1.f, -2.f, -3.f});
        auto tok = load(w.toBytes());
        QCOMPARE(tok->encode("a a", false, false), (std::vector<int32_t>{5, 5}));
        QCOMPARE(tok->encode("b", false, false), (std::vector<int32_t>{3, 0}));  // no byte tokens: unknown
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
