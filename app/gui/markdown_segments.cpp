#include "markdown_segments.h"

#include "safe_markdown.h"

#include <QStringList>
#include <QVariantMap>

namespace cairn::app {

QVariantList markdownSegments(const QString& markdown, const QColor& linkColor) {
    QVariantList out;
    auto push = [&](const QString& kind, QString text, const QString& language) {
        if (kind == QLatin1String("text") && text.trimmed().isEmpty()) return;
        if (text.endsWith(QLatin1Char('\n'))) text.chop(1);
        QVariantMap segment{
            {QStringLiteral("kind"), kind}, {QStringLiteral("text"), text}, {QStringLiteral("language"), language}};
        if (kind == QLatin1String("text")) segment[QStringLiteral("html")] = safeMarkdownHtml(text, linkColor);
        out.push_back(segment);
    };
    QString current, language;
    bool inCode = false;
    const auto lines = markdown.split(QLatin1Char('\n'));
    for (const auto& line : lines) {
        if (line.trimmed().startsWith(QLatin1String("```"))) {
            if (!inCode) {
                push(QStringLiteral("text"), current, {});
                language = line.trimmed().mid(3).trimmed();
            } else {
                push(QStringLiteral("code"), current, language);
                language.clear();
            }
            current.clear();
            inCode = !inCode;
            continue;
        }
        current += line + QLatin1Char('\n');
    }
    if (inCode) push(QStringLiteral("code"), current, language);
    else push(QStringLiteral("text"), current, {});
    return out;
}

}  // namespace cairn::app
