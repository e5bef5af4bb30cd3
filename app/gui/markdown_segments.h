// Splits a message into prose and fenced code blocks, so the chat view can
// show code in its own box with a copy button; the prose goes through
// safeMarkdownHtml (the view shows it as rich text, nothing else as rich text).
#pragma once

#include <QColor>
#include <QString>
#include <QVariantList>

namespace cairn::app {

// A list of {"kind": "text"|"code", "text": ..., "language": ..., "html": ...}
// ("html" for text: safeMarkdownHtml of it). An unclosed fence (a reply still
// streaming) runs to the end as code.
QVariantList markdownSegments(const QString& markdown, const QColor& linkColor = QColor(0x25, 0x63, 0xeb));

}  // namespace cairn::app
