// Switching branches in the offscreen app (issue 19, item 7): the clicked
// message stays where it is on screen (the view does not jump to the new
// branch's end, also when it was following the bottom), and coming back to a
// branch returns to the reply chosen further down it, not to the newest sibling.
#include "running_app.h"

#include "message_list_model.h"

#include "cairn/store/store.h"

#include <QGuiApplication>
#include <QQuickItem>
#include <QQuickStyle>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtTest>

Q_IMPORT_QML_PLUGIN(CairnPlugin)

using namespace cairn;
using namespace cairn::app;

namespace {

QQuickItem* findItem(QQuickItem* root, const QString& name) {
    if (!root) return nullptr;
    if (root->objectName() == name && root->isVisible()) return root;
    for (auto* child : root->childItems())
        if (auto* found = findItem(child, name)) return found;
    return nullptr;
}

QQuickItem* rowItem(QQuickItem* list, int row) {
    QQuickItem* item = nullptr;
    QMetaObject::invokeMethod(list, "itemAtIndex", Q_RETURN_ARG(QQuickItem*, item), Q_ARG(int, row));
    return item;
}

std::string longText(const char* what) {
    std::string s;
    for (int i = 1; i <= 30; ++i) s += "Paragraph " + std::to_string(i) + " of " + what + ".\n\n";
    return s;
}

}  // namespace

class TestAppBranches : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QQuickStyle::setStyle(QStringLiteral("Basic")); }

    void switchingKeepsThePlaceAndTheChoicesBelow() {
        QTemporaryDir dir;
        const QString model = test::writeTinyAppModel(dir.path());
        const AppPaths paths = AppPaths::standard(dir.filePath(QStringLiteral("data")));
        QDir().mkpath(paths.dataDir);
        qint64 conversation = -1, a1 = -1, a1b = -1, a2 = -1;
        {
            store::Store db(paths.databasePath().toStdString());
            conversation = db.createConversation("Branches");
            const int64_t u1 = db.addMessage(conversation, std::nullopt, store::Role::User, "Question one");
            a1 = db.addMessage(conversation, u1, store::Role::Assistant, longText("the first answer"));
            const int64_t u2 = db.addMessage(conversation, a1, store::Role::User, "Second question");
            a2 = db.addMessage(conversation, u2, store::Role::Assistant, "The reply chosen.");
            db.addMessage(conversation, u2, store::Role::Assistant, "A newer reply, not chosen.");
            a1b = db.addMessage(conversation, u1, store::Role::Assistant, longText("the other answer"));
            const int64_t u3 = db.addMessage(conversation, a1b, store::Role::User, "Third question");
            db.addMessage(conversation, u3, store::Role::Assistant, longText("the third answer"));
            db.setActiveLeaf(conversation, a2);  // reply 1 of 2 under the second question
        }
        test::RunningApp app(paths, model);
        QVERIFY(app.window);
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 20000);
        app.controller->openConversation(conversation);
        MessageListModel* m = app.controller->messages();
        QCOMPARE(m->rowCount(), 4);
        auto* list = app.find<QQuickItem>("messageList");
        QVERIFY(list);
        // At the bottom (the view follows after opening): the first answer's switcher is in sight.
        QTest::qWait(300);
        QQuickItem* next = findItem(rowItem(list, 1), QStringLiteral("nextBranch"));
        QVERIFY(next);
        const qreal before = next->mapToScene({0, 0}).y();
        QVERIFY(before > 0 && before < app.window->height());

        QMetaObject::invokeMethod(next, "clicked");
        QTRY_COMPARE_WITH_TIMEOUT(m->data(m->index(1), MessageListModel::IdRole).toLongLong(), a1b, 5000);
        QTest::qWait(300);  // the view lays the new rows out (and would follow them)
        QQuickItem* previous = findItem(rowItem(list, 1), QStringLiteral("previousBranch"));
        QVERIFY(previous);
        const qreal after = previous->mapToScene({0, 0}).y();
        QVERIFY2(qAbs(after - before) <= 2,
                 qPrintable(QStringLiteral("the switcher moved from y %1 to %2").arg(before).arg(after)));

        // Back: the reply chosen under the second question, not its newest sibling.
        QMetaObject::invokeMethod(previous, "clicked");
        QTRY_COMPARE_WITH_TIMEOUT(m->data(m->index(1), MessageListModel::IdRole).toLongLong(), a1, 5000);
        QCOMPARE(m->rowCount(), 4);
        QCOMPARE(m->data(m->index(3), MessageListModel::IdRole).toLongLong(), a2);
        store::Store db(paths.databasePath().toStdString());
        QCOMPARE(db.activeLeaf(conversation), std::optional<int64_t>(a2));
    }
};

QTEST_MAIN(TestAppBranches)
#include "test_app_branches.moc"
