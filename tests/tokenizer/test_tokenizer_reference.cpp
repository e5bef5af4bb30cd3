// Conformance: the token ids of every case in ../shared/reference/*.json
// (llama.cpp's llama_tokenize) equal our encoding with the fixture's vocabulary.
//   prompt:   add_special = the vocabulary's add-BOS flag, parse_special = true
//   prompt_b: add_special = false,                        parse_special = true
#include "cairn/gguf.h"
#include "cairn/tokenizer.h"
#include "shared_data.h"

#include <QTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>

using namespace cairn;

class TestTokenizerReference : public QObject {
    Q_OBJECT
    std::map<std::string, std::unique_ptr<Tokenizer>> tokenizers_;

private slots:
    void cases_data() {
        QTest::addColumn<QString>("reference");
        std::vector<std::string> files;
        for (const auto& entry : std::filesystem::directory_iterator(test::sharedPath("reference"))) {
            std::string name = entry.path().filename().string();
            if (entry.path().extension() == ".json" && name != "cases.json") files.push_back(name);
        }
        std::sort(files.begin(), files.end());
        QVERIFY(files.size() >= 9);
        for (const auto& f : files) QTest::newRow(f.c_str()) << QString::fromStdString(f);
    }

    void cases() {
        QFETCH(QString, reference);
        auto json = nlohmann::json::parse(test::readFile(test::sharedPath("reference/" + reference.toStdString())));
        std::string fixture = json.at("header").at("fixture").get<std::string>();
        // Both variants of a reference share one fixture: load each vocabulary once.
        auto& tok = tokenizers_[fixture];
        if (!tok) tok = Tokenizer::fromGguf(gguf::File::open(test::sharedPath("fixtures/" + fixture)));
        QCOMPARE(tok->addBos(), json.at("header").at("tokenization").at("add_bos").get<bool>());

        int compared = 0;
        for (const auto& c : json.at("cases")) {
            const std::string name = c.at("name").get<std::string>();
            auto ids = tok->encode(c.at("prompt").get<std::string>(), tok->addBos(), true);
            QVERIFY2(ids == c.at("tokens").get<std::vector<int32_t>>(), (fixture + " " + name + ": tokens").c_str());
            ++compared;
            if (c.contains("prompt_b")) {
                QVERIFY(c.contains("tokens_b"));
                auto idsB = tok->encode(c.at("prompt_b").get<std::string>(), false, true);
                QVERIFY2(idsB == c.at("tokens_b").get<std::vector<int32_t>>(),
                         (fixture + " " + name + ": tokens_b").c_str());
                ++compared;
            }
        }
        QVERIFY(compared >= 6);
    }
};

CAIRN_CONFORMANCE_MAIN(TestTokenizerReference)
#include "test_tokenizer_reference.moc"
