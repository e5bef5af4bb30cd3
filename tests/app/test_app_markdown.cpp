// safeMarkdownHtml: replies are untrusted. Raw HTML stays text, images become
// their alt text and URL, only http/https/mailto links are links, Markdown
// still formats. Each case renders the output as the view does (Qt rich text)
// and checks the document that results.
#include "chat_controller.h"
#include "markdown_segments.h"
#include "safe_markdown.h"

#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextDocument>
#include <QtTest>

using namespace cairn::app;

namespace {

struct Rendered {
    QString plain;
    QStringList anchors;  // hrefs of linked text, in order
    int images = 0;
    bool boldSomewhere = false;
};

// What the view's TextEdit (textFormat RichText) makes of the converter's output.
Rendered render(const QString& markdown) {
    QTextDocument doc;
    doc.setHtml(safeMarkdownHtml(markdown));
    Rendered r;
    r.plain = doc.toPlainText();
    for (QTextBlock b = doc.begin(); b.isValid(); b = b.next())
        for (auto it = b.begin(); !it.atEnd(); ++it) {
            const QTextCharFormat f = it.fragment().charFormat();
            if (f.isImageFormat()) ++r.images;
            if (f.isAnchor() && (r.anchors.isEmpty() || r.anchors.last() != f.anchorHref()))
                r.anchors << f.anchorHref();
            if (f.fontWeight() >= QFont::Bold) r.boldSomewhere = true;
        }
    return r;
}

}  // namespace

class TestAppMarkdown : public QObject {
    Q_OBJECT
private slots:
    void lessThanNeverSwallowsText() {
        QCOMPARE(render(QStringLiteral("Compare x<y and y>z today")).plain,
                 QStringLiteral("Compare x<y and y>z today"));
        // A long message with a `<` early shows whole.
        QString longText = QStringLiteral("a<b ");
        while (longText.size() < 10000) longText += QStringLiteral("word ");
        longText += QStringLiteral("END");
        const Rendered r = render(longText);
        QVERIFY2(r.plain.startsWith(QStringLiteral("a<b word")), qPrintable(r.plain.left(40)));
        QVERIFY(r.plain.endsWith(QStringLiteral("END")));
        QCOMPARE(r.plain.size(), longText.size());
    }

    void rawHtmlIsText() {
        const Rendered r = render(QStringLiteral("<b>not bold</b> <script>alert(1)</script> <!-- hidden -->\n\n"
                                                 "<div style=\"display:none\">secret</div>\n\n&lt;escaped&gt; &amp;"));
        QVERIFY2(r.plain.contains(QStringLiteral("<b>not bold</b> <script>alert(1)</script> <!-- hidden -->")),
                 qPrintable(r.plain));
        QVERIFY(r.plain.contains(QStringLiteral("<div style=\"display:none\">secret</div>")));
        QVERIFY(r.plain.contains(QStringLiteral("<escaped> &")));  // entities still mean their character
        QVERIFY(!r.boldSomewhere);
        QCOMPARE(r.images, 0);
    }

    void imagesBecomeTheirAltTextAndUrl() {
        const Rendered r =
            render(QStringLiteral("see ![a cat](http://127.0.0.1:9/y.png) and ![](https://h.example/z.png) "
                                  "and <img src=\"http://127.0.0.1:9/x\"> and ![f](file:///etc/passwd)"));
        QCOMPARE(r.images, 0);
        QVERIFY2(r.plain.contains(QStringLiteral("a cat (image: http://127.0.0.1:9/y.png)")), qPrintable(r.plain));
        QVERIFY(r.plain.contains(QStringLiteral("image (image: https://h.example/z.png)")));
        QVERIFY(r.plain.contains(QStringLiteral("<img src=\"http://127.0.0.1:9/x\">")));
        QVERIFY(r.plain.contains(QStringLiteral("f (image: file:///etc/passwd)")));
        // The http(s) URLs are links; the file: one is only text.
        QCOMPARE(r.anchors,
                 (QStringList{QStringLiteral("http://127.0.0.1:9/y.png"), QStringLiteral("https://h.example/z.png")}));
        // Emphasis in alt text: one replacement with all of it.
        QVERIFY(render(QStringLiteral("![a **b** c](http://h.example/i)"))
                    .plain.contains(QStringLiteral("a b c (image: http://h.example/i)")));
        // In a code span the text is code, left alone.
        QCOMPARE(render(QStringLiteral("`![](x)`")).plain, QStringLiteral("![](x)"));
    }

    void onlyOpenableLinksAreLinks() {
        const Rendered r =
            render(QStringLiteral("[web](https://example.org/a) [mail](mailto:a@example.org) "
                                  "[js](javascript:alert(1)) [local](file:///etc/passwd) [rel](../x) "
                                  "[custom](steam://run/1) <file:///etc/hosts> <https://example.org/auto>"));
        QCOMPARE(r.anchors,
                 (QStringList{QStringLiteral("https://example.org/a"), QStringLiteral("mailto:a@example.org"),
                              QStringLiteral("https://example.org/auto")}));
        for (const char* text : {"web", "mail", "js", "local", "rel", "custom", "file:///etc/hosts"})
            QVERIFY2(r.plain.contains(QLatin1String(text)), text);

        QVERIFY(isOpenableLink(QStringLiteral("https://example.org")));
        QVERIFY(isOpenableLink(QStringLiteral("HTTP://example.org/x?y#z")));
        QVERIFY(isOpenableLink(QStringLiteral("mailto:someone@example.org")));
        for (const char* bad : {"javascript:alert(1)", "file:///etc/passwd", "ftp://example.org", "../relative", "",
                                "http://", "mailto:", "data:text/html,hi", "vbscript:x", "smb://host/share"})
            QVERIFY2(!isOpenableLink(QLatin1String(bad)), bad);
    }

    void markdownStillFormats() {
        const Rendered r = render(
            QStringLiteral("# Title\n\nSome **bold** and `<code>`\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |"));
        QVERIFY(r.boldSomewhere);
        for (const char* text : {"Title", "bold", "<code>", "one", "two", "1", "2"})
            QVERIFY2(r.plain.contains(QLatin1String(text)), text);
        QVERIFY(!r.plain.contains(QLatin1String("**")));
        // The view's font rules: the writer's body font is not in the output.
        QVERIFY(!safeMarkdownHtml(QStringLiteral("x")).contains(QLatin1String("<body style")));
    }

    void segmentsCarryTheSafeRendering() {
        const auto segs =
            markdownSegments(QStringLiteral("before <img src=x>\n```<img src=\"http://127.0.0.1:9/l\">\ncode\n```"));
        QCOMPARE(segs.size(), 2);
        QTextDocument doc;
        doc.setHtml(segs[0].toMap().value(QStringLiteral("html")).toString());
        QCOMPARE(doc.toPlainText(), QStringLiteral("before <img src=x>"));
        // The fence's language is kept as text for the (plain-text) label.
        QCOMPARE(segs[1].toMap().value(QStringLiteral("language")).toString(),
                 QStringLiteral("<img src=\"http://127.0.0.1:9/l\">"));
        QVERIFY(!segs[1].toMap().contains(QStringLiteral("html")));
    }

    // The controller opens only what isOpenableLink allows, and says so otherwise.
    void controllerOpensOnlySafeLinks() {
        QTemporaryDir dir;
        ChatController c(AppPaths::standard(dir.path()));
        QList<QUrl> opened;
        c.setLinkOpener([&](const QUrl& u) {
            opened << u;
            return true;
        });
        QVERIFY(c.openLink(QStringLiteral("https://example.org/page")));
        QVERIFY(!c.openLink(QStringLiteral("javascript:alert(1)")));
        QVERIFY(c.errorText().contains(QStringLiteral("javascript:alert(1)")));
        QVERIFY(!c.openLink(QStringLiteral("file:///etc/passwd")));
        QCOMPARE(opened, (QList<QUrl>{QUrl(QStringLiteral("https://example.org/page"))}));
        c.shutdown();
    }
};

QTEST_MAIN(TestAppMarkdown)
#include "test_app_markdown.moc"
