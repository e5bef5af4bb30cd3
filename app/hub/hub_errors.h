// The one line a failed hub request is reported with: what it was for, and
// why in words a user can act on (a missing token, a gated repository, a
// network failure). Server and Qt text is cut to one printable line.
#pragma once

#include <QString>

class QNetworkReply;

namespace cairn::hub {

// `status` 0: no HTTP answer (the reply's network error explains it).
QString failureLine(const QString& what, int status, QNetworkReply* reply);
// HTTP status of a finished reply (0 without one).
int httpStatus(QNetworkReply* reply);

}  // namespace cairn::hub
