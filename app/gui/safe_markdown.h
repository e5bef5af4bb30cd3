// Markdown to rich text that shows everything and loads nothing: replies and
// imported messages are untrusted, and Qt's own Markdown/HTML rendering would
// interpret raw HTML (so "x<y and y>z" loses text) and fetch images.
#pragma once

#include <QColor>
#include <QString>

namespace cairn::app {

// The only links Cairn opens: http, https and mailto (no file:, javascript:,
// custom handlers or relative targets).
bool isOpenableLink(const QString& url);

// Qt rich text for `markdown` (GitHub dialect). Raw HTML is text; an image
// becomes its alt text and its URL (a link when openable), never an <img>;
// a link that is not openable is plain text. The output holds no tags but
// the ones Qt's HTML writer makes for text, lists, tables and links.
QString safeMarkdownHtml(const QString& markdown, const QColor& linkColor = QColor(0x25, 0x63, 0xeb));

}  // namespace cairn::app
