#include "conversation_settings_model.h"

#include "app_settings.h"

#include "cairn/store/store.h"

#include <QLocale>

#include <cmath>

namespace cairn::app {

namespace {

ConversationSettingsModel::Field field(const GenerationLimit& limit, const char* label, const char* hint) {
    return {limit.key, label, hint, limit.integer, limit.min, limit.max, &limit};
}

}  // namespace

const std::vector<ConversationSettingsModel::Field>& ConversationSettingsModel::fields() {
    // Keys and ranges from the one table the settings panel and the worker use too.
    static const std::vector<Field> f = {
        field(limits::temperature, QT_TR_NOOP("Temperature"), QT_TR_NOOP("0 = greedy")),
        field(limits::topK, QT_TR_NOOP("Top-k"), QT_TR_NOOP("0 = off")),
        field(limits::topP, QT_TR_NOOP("Top-p"), QT_TR_NOOP("1 = off")),
        field(limits::minP, QT_TR_NOOP("Min-p"), QT_TR_NOOP("0 = off")),
        field(limits::repeatPenalty, QT_TR_NOOP("Repetition penalty"), QT_TR_NOOP("1 = off")),
        field(limits::seed, QT_TR_NOOP("Seed"), QT_TR_NOOP("0 = random")),
        field(limits::maxTokens, QT_TR_NOOP("Maximum reply tokens"), QT_TR_NOOP("per reply")),
    };
    return f;
}

ConversationSettingsModel::ConversationSettingsModel(QObject* parent) : QAbstractListModel(parent) {}

void ConversationSettingsModel::setDefaults(AppSettings* settings) {
    if (defaults_) disconnect(defaults_, nullptr, this, nullptr);
    defaults_ = settings;
    if (!defaults_) return;
    connect(defaults_, &AppSettings::changed, this, [this] {
        if (!fields().empty()) emit dataChanged(index(0), index(rowCount() - 1));
    });
}

int ConversationSettingsModel::rowOf(const QString& key) {
    const auto& f = fields();
    for (size_t i = 0; i < f.size(); ++i)
        if (key == QLatin1String(f[i].key)) return int(i);
    return -1;
}

QString ConversationSettingsModel::format(const Field& field, const QVariant& value) {
    if (!value.isValid()) return {};
    if (field.integer) return QString::number(value.toLongLong());
    return QLocale::c().toString(value.toDouble(), 'g', 6);
}

QVariant ConversationSettingsModel::defaultValue(const Field& field) const {
    if (!defaults_) return {};
    const double v = defaults_->generationSettings().value(*field.limit);
    return field.integer ? QVariant(qint64(v)) : QVariant(v);
}

GenerationOverrides ConversationSettingsModel::overridesFrom(const nlohmann::json& json) {
    GenerationOverrides overrides;
    if (!json.is_object()) return overrides;
    for (const auto& field : fields()) {
        auto it = json.find(field.key);
        if (it == json.end() || !it->is_number()) continue;
        double v = it->get<double>();
        if (!std::isfinite(v) || v < field.min || v > field.max) continue;
        if (field.integer && v != std::floor(v)) continue;
        overrides.emplace_back(field.limit, v);
    }
    return overrides;
}

void ConversationSettingsModel::load(qint64 conversationId) {
    QVariantMap overrides;
    if (store_ && conversationId >= 0) {
        try {
            for (const auto& [limit, v] : overridesFrom(store_->settings(conversationId)))
                overrides[QLatin1String(limit->key)] = limit->integer ? QVariant(qint64(v)) : QVariant(v);
        } catch (const std::exception& e) {
            emit errorOccurred(QString::fromUtf8(e.what()));
        }
    }
    setRefusal({});
    beginResetModel();
    conversationId_ = conversationId;
    overrides_ = overrides;
    endResetModel();
    emit overridesChanged();
}

void ConversationSettingsModel::attach(qint64 conversationId) {
    const QVariantMap pending = overrides_;
    conversationId_ = conversationId;
    for (auto it = pending.begin(); it != pending.end(); ++it) persist(it.key(), it.value());
    load(conversationId);
}

bool ConversationSettingsModel::persist(const QString& key, const QVariant& value) {
    if (!store_ || conversationId_ < 0) return true;  // pending: kept in memory only
    try {
        auto json = store_->settings(conversationId_);
        const std::string k = key.toStdString();
        if (!value.isValid()) json.erase(k);
        else if (fields()[size_t(rowOf(key))].integer) json[k] = int64_t(value.toLongLong());
        else json[k] = value.toDouble();
        store_->setSettings(conversationId_, json);
        return true;
    } catch (const std::exception& e) {
        emit errorOccurred(QString::fromUtf8(e.what()));
        return false;
    }
}

void ConversationSettingsModel::rowChanged(int row) {
    emit dataChanged(index(row), index(row));
    emit overridesChanged();
}

void ConversationSettingsModel::setRefusal(const QString& text) {
    if (refusal_ == text) return;
    refusal_ = text;
    emit refusalChanged();
}

bool ConversationSettingsModel::refuse(const Field& field) {
    setRefusal(field.integer ? tr("%1 is a whole number from %2 to %3.")
                                   .arg(tr(field.label), format(field, field.min), format(field, field.max))
                             : tr("%1 is a number from %2 to %3.")
                                   .arg(tr(field.label), format(field, field.min), format(field, field.max)));
    return false;
}

bool ConversationSettingsModel::setOverride(const QString& key, const QVariant& value) {
    const int row = rowOf(key);
    if (row < 0) return false;
    const Field& field = fields()[size_t(row)];
    bool ok = false;
    const double v = value.toDouble(&ok);
    if (!ok || !std::isfinite(v) || v < field.min || v > field.max) return refuse(field);
    if (field.integer && v != std::floor(v)) return refuse(field);
    setRefusal({});
    const QVariant stored = field.integer ? QVariant(qint64(v)) : QVariant(v);
    if (overrides_.value(key) == stored) return true;
    if (!persist(key, stored)) return false;
    overrides_[key] = stored;
    rowChanged(row);
    return true;
}

bool ConversationSettingsModel::setOverrideText(const QString& key, const QString& text) {
    const QString t = text.trimmed();
    if (t.isEmpty()) {
        if (rowOf(key) < 0) return false;
        resetOverride(key);
        return true;
    }
    const int row = rowOf(key);
    if (row < 0) return false;
    bool ok = false;
    const double v = QLocale::c().toDouble(QString(t).replace(QLatin1Char(','), QLatin1Char('.')), &ok);
    return ok ? setOverride(key, v) : refuse(fields()[size_t(row)]);
}

void ConversationSettingsModel::resetOverride(const QString& key) {
    const int row = rowOf(key);
    setRefusal({});
    if (row < 0 || !overrides_.contains(key)) return;
    if (!persist(key, QVariant())) return;
    overrides_.remove(key);
    rowChanged(row);
}

void ConversationSettingsModel::resetAll() {
    for (const auto& field : fields()) resetOverride(QLatin1String(field.key));
}

QString ConversationSettingsModel::summary() const {
    QStringList parts;
    for (const auto& field : fields()) {
        const QString key = QLatin1String(field.key);
        if (overrides_.contains(key))
            parts << QStringLiteral("%1 %2").arg(tr(field.label).toLower(), format(field, overrides_.value(key)));
    }
    return parts.join(QStringLiteral(" · "));
}

int ConversationSettingsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(fields().size());
}

QVariant ConversationSettingsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Field& field = fields()[size_t(index.row())];
    const QString key = QLatin1String(field.key);
    const bool overridden = overrides_.contains(key);
    switch (role) {
    case KeyRole: return key;
    case Qt::DisplayRole:
    case LabelRole: return tr(field.label);
    case HintRole: return tr(field.hint);
    case IntegerRole: return field.integer;
    case OverriddenRole: return overridden;
    case ValueRole: return overridden ? overrides_.value(key) : defaultValue(field);
    case DefaultValueRole: return defaultValue(field);
    case ValueTextRole: return overridden ? format(field, overrides_.value(key)) : QString();
    case DefaultTextRole: return format(field, defaultValue(field));
    }
    return {};
}

QHash<int, QByteArray> ConversationSettingsModel::roleNames() const {
    return {{KeyRole, "key"},
            {LabelRole, "label"},
            {HintRole, "hint"},
            {IntegerRole, "integer"},
            {OverriddenRole, "overridden"},
            {ValueRole, "value"},
            {DefaultValueRole, "defaultValue"},
            {ValueTextRole, "valueText"},
            {DefaultTextRole, "defaultText"}};
}

}  // namespace cairn::app
