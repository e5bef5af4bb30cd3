// Splits a message into prose and fenced code blocks, so the chat view can
// show code in its own box with a copy button (Text.MarkdownText renders the prose).
#pragma once

#include <QString>
#include <QVariantList>

namespace cairn::app {

// A list of {"kind": "text"|"code", "text": ..., "language": ...}. An unclosed
// fence (a reply still streaming) runs to the end as code.
QVariantList markdownSegments(const QString& markdown);

} // namespace cairn::app
