// Export to JSON and Markdown, import from JSON.
#include "cairn/error.h"
#include "cairn/store/exchange.h"
#include "cairn/store/store.h"
#include "store_test_util.h"

#include <QElapsedTimer>
#include <QFile>
#include <QTest>

#include <map>

using namespace cairn;
using namespace cairn::store;

namespace {

struct Built {
    int64_t conversation, u1, a1, u2, a2, u2b, a2b;
};

Built buildTree(Store& s) {
    Built b{};
    b.conversation = s.createConversation("Trip 'planning'", "/m/model.gguf", "fp-1", "You are terse.");
    s.setSettings(b.conversation, {{"temperature", 0.7}, {"max_tokens", 256}});
    s.setPinned(b.conversation, true);
    b.u1 = s.addMessage(b.conversation, std::nullopt, Role::User, "Where to go in **May**?");
    b.a1 = s.addMessage(b.conversation, b.u1, Role::Assistant, "", false);
    s.finishMessage(b.a1, "Try Lisbon.\n\n```sh\necho hi\n```",
                    {.tokenCount = 9, .prefillTokens = 30, .prefillMs = 12.5, .decodeMs = 90});
    b.u2 = s.addMessage(b.conversation, b.a1, Role::User, "And June?");
    b.a2 = s.addMessage(b.conversation, b.u2, Role::Assistant, "Oslo.");
    b.u2b = s.addMessage(b.conversation, b.a1, Role::User, "And in July?");
    b.a2b = s.addMessage(b.conversation, b.u2b, Role::Assistant, "Half writt", false);
    s.setActiveLeaf(b.conversation, b.a2);
    return b;
}

// Messages compared by content and shape (ids differ after import).
void compareTrees(const std::vector<Message>& x, const std::vector<Message>& y) {
    QCOMPARE(x.size(), y.size());
    std::map<int64_t, size_t> xi, yi;
    for (size_t i = 0; i < x.size(); ++i) xi[x[i].id] = i;
    for (size_t i = 0; i < y.size(); ++i) yi[y[i].id] = i;
    for (size_t i = 0; i < x.size(); ++i) {
        QCOMPARE(y[i].content, x[i].content);
        QCOMPARE(y[i].role, x[i].role);
        QCOMPARE(y[i].complete, x[i].complete);
        QCOMPARE(y[i].createdMs, x[i].createdMs);
        QCOMPARE(y[i].stats, x[i].stats);
        QCOMPARE(y[i].parentId.has_value(), x[i].parentId.has_value());
        if (x[i].parentId) QCOMPARE(yi.at(*y[i].parentId), xi.at(*x[i].parentId));
    }
}

}  // namespace

class TestStoreExchange : public QObject {
    Q_OBJECT
private slots:
    void jsonRoundTripThroughTextAndDatabase() {
        test::TempDb tmp;
        Store s(tmp.path());
        const Built b = buildTree(s);
        const ConversationData original = s.conversationData(b.conversation);

        const std::string text = toJson(original).dump(2);
        const ConversationData parsed = fromJsonText(text);
        const int64_t copy = s.importConversation(parsed);
        QVERIFY(copy != b.conversation);

        const ConversationData back = s.conversationData(copy);
        const Conversation &x = original.conversation, &y = back.conversation;
        QCOMPARE(y.title, x.title);
        QCOMPARE(y.modelPath, x.modelPath);
        QCOMPARE(y.modelFingerprint, x.modelFingerprint);
        QCOMPARE(y.systemPrompt, x.systemPrompt);
        QVERIFY(y.settings == x.settings);
        QCOMPARE(y.createdMs, x.createdMs);
        QCOMPARE(y.updatedMs, x.updatedMs);
        QCOMPARE(y.pinned, x.pinned);
        compareTrees(original.messages, back.messages);
        // The active leaf points at the same message (by position).
        QVERIFY(y.activeLeafId);
        QCOMPARE(s.message(*y.activeLeafId).content, std::string("Oslo."));
        // Exporting the import gives the same document up to ids.
        auto strip = [](nlohmann::json j) {
            j.erase("active_leaf");
            for (auto& m : j["messages"]) {
                m.erase("id");
                m.erase("parent");
            }
            return j;
        };
        QCOMPARE(strip(toJson(back)).dump(), strip(toJson(original)).dump());
        QCOMPARE(s.search("Lisbon").size(), size_t(2));
    }

    // Reasoning stays out of search and export unless the export asks; with it,
    // JSON round-trips it (a wrong type or a negative time from another file is handled).
    void reasoningIsKeptApartFromTheAnswer() {
        test::TempDb tmp;
        Store s(tmp.path());
        const int64_t c = s.createConversation("Sums");
        const int64_t u = s.addMessage(c, std::nullopt, Role::User, "What is 2 + 3?");
        const int64_t a = s.addMessage(c, u, Role::Assistant, "", false);
        s.updatePartial(a, "", "<think>\nCounting zebras");
        QCOMPARE(s.message(a).reasoning, std::string("<think>\nCounting zebras"));
        QVERIFY(!s.message(a).complete);
        s.finishMessage(a, "\n\nIt is 5.", {.tokenCount = 5, .reasoningMs = 1200},
                        "<think>\nCounting zebras\n</think>");
        QVERIFY(s.search("zebras").empty());
        QCOMPARE(s.search("five is").size(), size_t(0));
        QCOMPARE(s.search("It is").size(), size_t(1));
        const ConversationData data = s.conversationData(c);
        QVERIFY(toJson(data).dump().find("zebras") == std::string::npos);
        const std::string md = toMarkdown(data);
        QVERIFY(md.find("zebras") == std::string::npos);
        QVERIFY(md.find("\nIt is 5.\n") != std::string::npos);
        QVERIFY(toMarkdown(data, {.includeReasoning = true}).find("Counting zebras") != std::string::npos);
        const nlohmann::json withReasoning = toJson(data, {.includeReasoning = true});
        const ConversationData back = fromJson(withReasoning);
        QCOMPARE(back.messages[1].reasoning, std::string("<think>\nCounting zebras\n</think>"));
        QCOMPARE(back.messages[1].stats.reasoningMs, int64_t(1200));
        const int64_t imported = s.importConversation(back);
        compareTrees(s.messages(imported), s.messages(c));
        QCOMPARE(s.messages(imported)[1].reasoning, back.messages[1].reasoning);
        // Without the option the answer imports alone.
        QVERIFY(fromJson(toJson(data)).messages[1].reasoning.empty());
        nlohmann::json bad = withReasoning;
        bad["messages"][1]["reasoning"] = 7;
        QVERIFY_THROWS_EXCEPTION(Error, fromJson(bad));
        nlohmann::json negative = withReasoning;
        negative["messages"][1]["stats"]["reasoning_ms"] = -5;
        QCOMPARE(fromJson(negative).messages[1].stats.reasoningMs, int64_t(0));
        // A database another version wrote: a negative time reads as none.
        sql::Statement(s.database(), "UPDATE messages SET reasoning_ms = -9").run();
        QCOMPARE(s.message(a).stats.reasoningMs, int64_t(0));
    }

    void markdownShowsTheActiveBranch() {
        test::TempDb tmp;
        Store s(tmp.path());
        const Built b = buildTree(s);
        const std::string md = toMarkdown(s.conversationData(b.conversation));
        const QString q = QString::fromStdString(md);
        QVERIFY2(q.startsWith("# Trip 'planning'\n"), md.c_str());
        QVERIFY(q.contains("## System\n\nYou are terse.\n"));
        QVERIFY(q.contains("## User\n\nWhere to go in **May**?\n"));
        QVERIFY(q.contains("```sh\necho hi\n```"));
        QVERIFY(q.contains("Oslo."));
        QVERIFY(!q.contains("July"));  // the other branch
        QVERIFY(q.indexOf("May") < q.indexOf("Lisbon"));
        QVERIFY(q.indexOf("Lisbon") < q.indexOf("June"));

        s.setActiveLeaf(b.conversation, b.a2b);
        const QString other = QString::fromStdString(toMarkdown(s.conversationData(b.conversation)));
        QVERIFY(other.contains("July"));
        QVERIFY(other.contains("*(incomplete)*"));
        QVERIFY(!other.contains("Oslo"));
    }

    void badDocumentsAreRefusedWithTheField() {
        test::TempDb tmp;
        Store s(tmp.path());
        const Built b = buildTree(s);
        const nlohmann::json good = toJson(s.conversationData(b.conversation));
        auto refused = [&](nlohmann::json j, const char* field) {
            try {
                s.importConversation(fromJson(j));
            } catch (const Error& e) {
                return QString(e.what()).contains(field);
            }
            return false;
        };
        const size_t before = s.listConversations().size();
        QVERIFY_THROWS_EXCEPTION(Error, fromJsonText("{not json"));
        QVERIFY_THROWS_EXCEPTION(Error, fromJsonText("[]"));
        auto j = good;
        j["format"] = "other";
        QVERIFY(refused(j, "format"));
        j = good;
        j["version"] = 99;
        QVERIFY(refused(j, "version"));
        j = good;
        j.erase("messages");
        QVERIFY(refused(j, "messages"));
        j = good;
        j["messages"][1]["role"] = "wizard";
        QVERIFY(refused(j, "messages[1].role"));
        j = good;
        j["messages"][2]["content"] = 5;
        QVERIFY(refused(j, "messages[2].content"));
        j = good;
        j["messages"][0]["id"] = "x";
        QVERIFY(refused(j, "messages[0].id"));
        j = good;
        j["settings"] = "hot";
        QVERIFY(refused(j, "settings"));
        j = good;
        j["messages"][1]["parent"] = 123456;
        QVERIFY(refused(j, "parent 123456"));
        j = good;
        j["messages"][1]["id"] = j["messages"][0]["id"];
        QVERIFY(refused(j, "twice"));
        j = good;
        j["active_leaf"] = 777777;
        QVERIFY(refused(j, "active leaf"));
        j = good;
        std::swap(j["messages"][0], j["messages"][1]);
        QVERIFY(refused(j, "comes after"));
        // A refused import leaves nothing behind (not even hidden).
        QCOMPARE(s.listConversations().size(), before);
        QCOMPARE(s.deletedConversations().size(), size_t(0));
        test::ftsIntegrityCheck(s.database());
    }

    void minimalDocumentImports() {
        test::TempDb tmp;
        Store s(tmp.path());
        const auto data = fromJsonText(R"({"format": "cairn.conversation", "version": 1,
            "messages": [{"id": 5, "role": "user", "content": "hi"},
                         {"id": 9, "parent": 5, "role": "assistant", "content": "hello"}]})");
        const int64_t c = s.importConversation(data);
        const auto msgs = s.messages(c);
        QCOMPARE(msgs.size(), size_t(2));
        QCOMPARE(msgs[1].parentId, std::optional<int64_t>(msgs[0].id));
        QVERIFY(msgs[1].complete);
        QCOMPARE(s.activeLeaf(c), std::optional<int64_t>(msgs[1].id));
    }

    // Hostile files, generated here: each one is a clean Error naming the
    // limit, quickly and without building the document it describes.
    void hostileFilesHitTheirLimit() {
        QTemporaryDir dir;
        auto file = [&](const char* name, const std::string& text) {
            const QString path = dir.filePath(QLatin1String(name));
            QFile f(path);
            if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
            f.write(text.data(), qint64(text.size()));
            return path.toStdString();
        };
        // No time bound: a hang is CTest's timeout, and a loaded machine is no failure.
        auto refusedWith = [](const std::string& path, const char* expected) {
            try {
                fromJsonFile(path);
            } catch (const Error& e) {
                if (!QString(e.what()).contains(QLatin1String(expected))) qWarning("error: %s", e.what());
                return QString(e.what()).contains(QLatin1String(expected));
            }
            return false;
        };
        const std::string head = "{\"format\": \"cairn.conversation\", \"version\": 1, ";

        // Larger than 256 MiB (sparse: nothing is written, nothing is read).
        {
            const QString path = dir.filePath(QStringLiteral("huge.json"));
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            QVERIFY(f.resize(qint64(kImportMaxFileBytes) + 1));
            f.close();
            QVERIFY(refusedWith(path.toStdString(), "more than the limit of 256.0 MiB"));
        }
        // Nested a million deep in the settings.
        QVERIFY(refusedWith(file("deep.json",
                                 head + "\"settings\": {\"a\": " + std::string(1000000, '[') +
                                     std::string(1000000, ']') + "}, \"messages\": []}"),
                            "nested deeper than the limit of 32"));
        // Five million tiny values.
        {
            std::string zeros;
            zeros.reserve(10000000);
            for (int i = 0; i < 5000000; ++i) zeros += i ? ",0" : "0";
            QVERIFY(refusedWith(file("values.json", head + "\"settings\": {\"a\": [" + zeros + "]}, \"messages\": []}"),
                                "JSON values"));
        }
        // One message more than the limit.
        {
            std::string messages = "[";
            for (size_t i = 0; i <= kImportMaxMessages; ++i)
                messages += (i ? ",{\"id\":" : "{\"id\":") + std::to_string(i) + ",\"role\":\"user\",\"content\":\"\"}";
            messages += "]";
            QVERIFY(refusedWith(file("many.json", head + "\"messages\": " + messages + "}"),
                                "100001 messages, more than the limit of 100000"));
        }
        // A message, a system prompt and a title longer than theirs.
        const std::string big(kImportMaxTextBytes + 1, 'x');
        QVERIFY(
            refusedWith(file("content.json",
                             head + "\"messages\": [{\"id\": 1, \"role\": \"user\", \"content\": \"" + big + "\"}]}"),
                        "messages[0].content: 4194305 bytes, more than the limit of 4194304"));
        QVERIFY(refusedWith(file("system.json", head + "\"system_prompt\": \"" + big + "\", \"messages\": []}"),
                            "system_prompt"));
        QVERIFY(refusedWith(
            file("title.json",
                 head + "\"title\": \"" + std::string(kImportMaxTitleBytes + 1, 't') + "\", \"messages\": []}"),
            "title: 1025 bytes"));
        QVERIFY(refusedWith(
            file("path.json",
                 head + "\"model_path\": \"" + std::string(kImportMaxFieldBytes + 1, 'p') + "\", \"messages\": []}"),
            "model_path"));
        // At the limits themselves a file imports.
        const std::string fits = head + "\"title\": \"" + std::string(kImportMaxTitleBytes, 't') +
            "\", \"messages\": [{\"id\": 1, \"role\": \"user\", \"content\": \"" +
            std::string(kImportMaxTextBytes, 'x') + "\"}]}";
        const ConversationData ok = fromJsonFile(file("fits.json", fits));
        QCOMPARE(ok.messages.size(), size_t(1));
        QCOMPARE(ok.messages[0].content.size(), kImportMaxTextBytes);
        QVERIFY_THROWS_EXCEPTION(Error, fromJsonFile(dir.filePath(QStringLiteral("missing.json")).toStdString()));
    }

    // A long conversation goes in in batches: between two batches another
    // connection can write (no transaction spans the import) and sees nothing
    // of the half-imported conversation; cancelling removes it; a finished
    // one is whole, and can be deleted again.
    void importIsBatchedHiddenAndCancellable() {
        test::TempDb tmp;
        Store s(tmp.path());
        Store other(tmp.path());
        const int64_t existing = other.createConversation("busy chat");
        ConversationData data;
        data.conversation.title = "long";
        std::optional<int64_t> parent;
        for (int64_t i = 1; i <= 2500; ++i) {  // one chain, deeper than SQLite's trigger depth of 1000
            Message m;
            m.id = i * 10;
            m.parentId = parent;
            m.role = i % 2 ? Role::User : Role::Assistant;
            m.content = "message " + std::to_string(i);
            data.messages.push_back(m);
            parent = m.id;
        }
        data.conversation.activeLeafId = parent;

        std::vector<size_t> calls;
        Store::ImportOptions options;
        options.batchMessages = 1000;
        options.progress = [&](size_t written) {
            calls.push_back(written);
            // The other connection writes at once (its busy timeout would fail
            // a write behind an open import transaction).
            other.addMessage(existing, std::nullopt, Role::User,
                             "written during the import " + std::to_string(written));
            for (const auto& c : other.listConversations())
                if (c.title == "long") return false;
            if (!other.search("message").empty()) return false;
            return true;
        };
        const int64_t id = s.importConversation(data, options);
        QCOMPARE(calls, (std::vector<size_t>{1000, 2000, 2500}));
        QCOMPARE(s.messages(id).size(), size_t(2500));
        QCOMPARE(s.pathTo(*s.activeLeaf(id)).size(), size_t(2500));
        QCOMPARE(other.messages(existing).size(), size_t(3));
        QCOMPARE(s.listConversations().size(), size_t(2));
        test::ftsIntegrityCheck(s.database());

        options.progress = [&](size_t written) { return written < 2000; };
        data.conversation.title = "cancelled";
        QVERIFY_THROWS_EXCEPTION(Error, s.importConversation(data, options));
        QCOMPARE(s.listConversations().size(), size_t(2));
        QCOMPARE(s.deletedConversations().size(), size_t(0));
        test::ftsIntegrityCheck(s.database());

        s.purgeConversation(id);
        QCOMPARE(s.listConversations().size(), size_t(1));
    }

    void unusedTitleSaysItIsACopy() {
        test::TempDb tmp;
        Store s(tmp.path());
        QCOMPARE(s.unusedTitle("Trip"), std::string("Trip"));
        s.createConversation("Trip");
        QCOMPARE(s.unusedTitle("Trip"), std::string("Trip (imported)"));
        s.createConversation("Trip (imported)");
        QCOMPARE(s.unusedTitle("Trip"), std::string("Trip (imported 2)"));
        const int64_t gone = s.createConversation("Gone");
        s.deleteConversation(gone);
        QCOMPARE(s.unusedTitle("Gone"), std::string("Gone"));  // a deleted one does not count
    }
};

QTEST_APPLESS_MAIN(TestStoreExchange)
#include "test_store_exchange.moc"
