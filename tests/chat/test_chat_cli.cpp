// `cairn-cli template` writes exactly the reference rendering to stdout, and an
// error with a non-zero status for a conversation the template refuses.
#include "cairn/gguf.h"
#include "shared_data.h"

#include <nlohmann/json.hpp>

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Run {
    int exitCode;
    QByteArray out, err;
};

Run runCli(const QStringList& args) {
    QProcess p;
    p.start(QString::fromLocal8Bit(qgetenv("CAIRN_CLI")), args);
    if (!p.waitForFinished(60000)) return {-1, {}, "timeout"};
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

nlohmann::ordered_json findCase(const std::string& templateName, const std::string& conv, bool agp) {
    auto expected = nlohmann::ordered_json::parse(
        cairn::test::readFile(cairn::test::sharedPath("templates/expected/" + templateName + ".json")));
    for (const auto& c : expected["cases"])
        if (c["conversation"] == conv && c["add_generation_prompt"] == agp) return c;
    return {};
}

QString shared(const std::string& relative) { return QString::fromStdString(cairn::test::sharedPath(relative)); }

}  // namespace

class TestChatCli : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY2(!qgetenv("CAIRN_CLI").isEmpty(), "CAIRN_CLI is not set"); }

    void rendersByteForByte() {
        auto c = findCase("meta-llama-Llama-3.1-8B-Instruct", "unicode", true);
        QVERIFY(c.is_object() && c["output"].is_string());
        auto r = runCli({"template", "--template", shared("templates/templates/meta-llama-Llama-3.1-8B-Instruct.jinja"),
                         "--messages", shared("templates/conversations/unicode.json"), "--add-generation-prompt",
                         "--bos", "<|begin_of_text|>", "--eos", "<|eot_id|>"});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.err, QByteArray());
        QCOMPARE(r.out, QByteArray::fromStdString(c["output"].get<std::string>()));
    }

    void refusedConversationIsAnError() {
        auto c = findCase("google-gemma-2-2b-it", "system_user", false);
        QVERIFY(c.is_object() && c["error"].is_string());
        auto r = runCli({"template", "--template", shared("templates/templates/google-gemma-2-2b-it.jinja"),
                         "--messages", shared("templates/conversations/system_user.json")});
        QVERIFY(r.exitCode != 0);
        QCOMPARE(r.out, QByteArray());
        QVERIFY2(r.err.contains("System role not supported"), r.err.constData());
    }

    // -m reads tokenizer.chat_template and takes bos/eos from the vocabulary; --bos/--eos override.
    void readsTheTemplateAndTokensFromAModel() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        cairn::gguf::Writer w;
        w.setString("general.architecture", "llama");
        w.setString("tokenizer.chat_template",
                    "{{ bos_token }}{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}{{ eos_token }}");
        w.setStrings("tokenizer.ggml.tokens", {"<unk>", "<|first|>", "<|last|>", "x"});
        w.setUInt32("tokenizer.ggml.bos_token_id", 1);
        w.setUInt32("tokenizer.ggml.eos_token_id", 2);
        std::string model = dir.filePath("m.gguf").toStdString();
        w.write(model);
        QFile messages(dir.filePath("messages.json"));
        QVERIFY(messages.open(QIODevice::WriteOnly));
        messages.write("[{\"role\": \"user\", \"content\": \"hi \\u00e9\"}]");
        messages.close();

        auto r = runCli({"template", "-m", QString::fromStdString(model), "--messages", messages.fileName()});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out, QByteArray("<|first|>[user:hi \xc3\xa9]<|last|>"));
        r = runCli({"template", "-m", QString::fromStdString(model), "--messages", messages.fileName(), "--bos", "B",
                    "--eos", ""});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out, QByteArray("B[user:hi \xc3\xa9]"));
    }

    void missingTemplateSourceIsAnError() {
        auto r = runCli({"template", "--messages", shared("templates/conversations/unicode.json")});
        QVERIFY(r.exitCode != 0);
        QVERIFY(!r.err.isEmpty());
    }
};

CAIRN_CONFORMANCE_MAIN(TestChatCli)
#include "test_chat_cli.moc"
