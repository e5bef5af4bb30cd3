#include "safe_markdown.h"

#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QUrl>

#include <utility>
#include <vector>

namespace cairn::app {
namespace {

// Qt's importer drops an image with empty alt text altogether (it inserts the
// image only with its alt text); giving it one keeps the URL visible. Code
// spans are copied as they are.
QString withAltForEmptyImages(const QString& s) {
    QString out;
    out.reserve(s.size() + 16);
    const qsizetype n = s.size();
    qsizetype i = 0;
    while (i < n) {
        const QChar c = s[i];
        if (c == QLatin1Char('\\') && i + 1 < n) {
            out += s.mid(i, 2);
            i += 2;
        } else if (c == QLatin1Char('`')) {
            qsizetype run = 0;
            while (i + run < n && s[i + run] == QLatin1Char('`')) ++run;
            // The span closes at the next run of exactly `run` backticks.
            qsizetype j = i + run, close = -1;
            while (j < n) {
                if (s[j] != QLatin1Char('`')) {
                    ++j;
                    continue;
                }
                qsizetype k = 0;
                while (j + k < n && s[j + k] == QLatin1Char('`')) ++k;
                if (k == run) {
                    close = j + k;
                    break;
                }
                j += k;
            }
            const qsizetype end = close < 0 ? i + run : close;
            out += s.mid(i, end - i);
            i = end;
        } else if (s.mid(i, 4) == QLatin1String("![](")) {
            out += QLatin1String("![image](");
            i += 4;
        } else {
            out += c;
            ++i;
        }
    }
    return out;
}

QTextCharFormat textFormatOf(QTextCharFormat f) {
    f.setObjectType(QTextFormat::NoObject);
    for (int p : {int(QTextFormat::ImageName), int(QTextFormat::ImageAltText), int(QTextFormat::ImageTitle),
                  int(QTextFormat::ImageWidth), int(QTextFormat::ImageHeight), int(QTextFormat::ImageQuality),
                  int(QTextFormat::TextToolTip)})
        f.clearProperty(p);
    return f;
}

struct Edit {
    int position = 0, length = 0;
    QTextCharFormat format;
    QString url;  // an image's source
    QString alt;  // an image's alt text (empty for an unlinked anchor)
    bool image = false;
};

}  // namespace

bool isOpenableLink(const QString& url) {
    const QUrl u(url, QUrl::StrictMode);
    if (!u.isValid()) return false;
    const QString scheme = u.scheme().toLower();
    if (scheme == QLatin1String("mailto")) return !u.path().isEmpty();
    return (scheme == QLatin1String("http") || scheme == QLatin1String("https")) && !u.host().isEmpty();
}

QString safeMarkdownHtml(const QString& markdown, const QColor& linkColor) {
    QTextDocument doc;
    doc.setMarkdown(
        withAltForEmptyImages(markdown),
        QTextDocument::MarkdownFeatures(QTextDocument::MarkdownDialectGitHub | QTextDocument::MarkdownNoHTML));

    // Collected first, applied from the end so earlier positions stay valid.
    std::vector<Edit> edits;
    for (QTextBlock block = doc.begin(); block.isValid(); block = block.next()) {
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextFragment fragment = it.fragment();
            const QTextCharFormat format = fragment.charFormat();
            if (format.isImageFormat()) {
                const QTextImageFormat image = format.toImageFormat();
                const QString alt = image.property(QTextFormat::ImageAltText).toString();
                // Alt text with emphasis arrives as one image per piece: one replacement for the run.
                if (!edits.empty() && edits.back().image && edits.back().url == image.name() &&
                    edits.back().position + edits.back().length == fragment.position()) {
                    edits.back().length += fragment.length();
                    edits.back().alt += alt;
                    continue;
                }
                edits.push_back(
                    {fragment.position(), fragment.length(), textFormatOf(format), image.name(), alt, true});
            } else if (format.isAnchor() && !isOpenableLink(format.anchorHref())) {
                edits.push_back({fragment.position(), fragment.length(), format, {}, {}, false});
            }
        }
    }
    for (auto e = edits.rbegin(); e != edits.rend(); ++e) {
        QTextCursor cursor(&doc);
        cursor.setPosition(e->position);
        cursor.setPosition(e->position + e->length, QTextCursor::KeepAnchor);
        QTextCharFormat plain = e->format;
        plain.setAnchor(false);
        plain.clearProperty(QTextFormat::AnchorHref);
        plain.clearProperty(QTextFormat::AnchorName);
        plain.clearForeground();
        if (!e->image) {
            cursor.setCharFormat(plain);
            continue;
        }
        cursor.removeSelectedText();
        cursor.insertText(e->alt.trimmed().isEmpty() ? QStringLiteral("image") : e->alt, plain);
        cursor.insertText(QStringLiteral(" (image: "), plain);
        QTextCharFormat link = plain;
        if (isOpenableLink(e->url)) {
            link.setAnchor(true);
            link.setAnchorHref(e->url);
        }
        cursor.insertText(e->url, link);
        cursor.insertText(QStringLiteral(")"), plain);
    }
    // Links in the theme's colour (the importer takes the application palette's).
    std::vector<std::pair<int, int>> links;
    for (QTextBlock block = doc.begin(); block.isValid(); block = block.next())
        for (auto it = block.begin(); !it.atEnd(); ++it)
            if (it.fragment().charFormat().isAnchor())
                links.emplace_back(it.fragment().position(), it.fragment().length());
    QTextCharFormat linkLook;
    linkLook.setForeground(linkColor);
    linkLook.setFontUnderline(true);
    for (const auto& [position, length] : links) {
        QTextCursor cursor(&doc);
        cursor.setPosition(position);
        cursor.setPosition(position + length, QTextCursor::KeepAnchor);
        cursor.mergeCharFormat(linkLook);
    }

    // The view's font and colour apply: drop the writer's <body style="font...">.
    QString html = doc.toHtml();
    const qsizetype body = html.indexOf(QLatin1String("<body"));
    if (body >= 0) {
        const qsizetype end = html.indexOf(QLatin1Char('>'), body);
        if (end > body) html.replace(body, end - body + 1, QStringLiteral("<body>"));
    }
    return html;
}

}  // namespace cairn::app
