// The open conversation's sampling overrides: one row per setting that a
// conversation may override (temperature, top-k, top-p, min-p, repetition
// penalty, seed, maximum reply tokens). Each row either uses the app default
// or holds an override, stored in the conversation's settings JSON under the
// same key as its row of generation_limits.h, so the controller's merge
// applies it to the next reply. Keys it does not know are left untouched.
//
// Before the first message there is no conversation yet: overrides made then
// are kept here and written when the controller attaches the new one.
#pragma once

#include "generation_settings.h"

#include <QAbstractListModel>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>

#include <nlohmann/json_fwd.hpp>

#include <vector>

namespace cairn::store {
class Store;
}

namespace cairn::app {

class AppSettings;

class ConversationSettingsModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by the ChatController")
    Q_PROPERTY(int overrideCount READ overrideCount NOTIFY overridesChanged)
    // "temperature 0.2 · seed 42", empty when everything uses the defaults.
    Q_PROPERTY(QString summary READ summary NOTIFY overridesChanged)
    // Why the last value typed was refused ("Top-p is a number from 0 to 1"); empty after a good one.
    Q_PROPERTY(QString refusal READ refusal NOTIFY refusalChanged)
public:
    enum Roles {
        KeyRole = Qt::UserRole + 1,
        LabelRole,
        HintRole,
        IntegerRole,
        OverriddenRole,
        ValueRole,
        DefaultValueRole,
        ValueTextRole,
        DefaultTextRole
    };

    // What a conversation may override, with the accepted range.
    struct Field {
        const char* key;
        const char* label;
        const char* hint;
        bool integer;
        double min, max;
        const GenerationLimit* limit;  // the table row it is
    };
    static const std::vector<Field>& fields();
    // The overrides a conversation's settings JSON holds: only the fields
    // above, only in range (an imported or hand-edited file cannot set the
    // thread count or the context size this way).
    static GenerationOverrides overridesFrom(const nlohmann::json& settings);

    explicit ConversationSettingsModel(QObject* parent = nullptr);
    void setStore(store::Store* store) { store_ = store; }
    // The defaults shown beside each row; the model follows their changes.
    void setDefaults(AppSettings* settings);

    // Shows the overrides of `conversationId`; -1 starts an empty pending set.
    void load(qint64 conversationId);
    // The pending overrides become `conversationId`'s (written to the database).
    void attach(qint64 conversationId);
    qint64 conversationId() const { return conversationId_; }

    // Sets an override; a value outside the field's range (or an unknown key)
    // is refused with false and changes nothing.
    Q_INVOKABLE bool setOverride(const QString& key, const QVariant& value);
    // From a text field: empty text resets to the default, otherwise the
    // number is parsed ("0,5" is read as 0.5).
    Q_INVOKABLE bool setOverrideText(const QString& key, const QString& text);
    Q_INVOKABLE void resetOverride(const QString& key);
    Q_INVOKABLE void resetAll();
    // The overrides of the shown conversation, keyed as generation_limits.h.
    QVariantMap overrides() const { return overrides_; }
    int overrideCount() const { return int(overrides_.size()); }
    QString summary() const;
    QString refusal() const { return refusal_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

signals:
    void overridesChanged();
    void refusalChanged();
    void errorOccurred(const QString& message);

private:
    static int rowOf(const QString& key);
    static QString format(const Field& field, const QVariant& value);
    QVariant defaultValue(const Field& field) const;
    // Writes the override of `key` (invalid: removed) to the database.
    bool persist(const QString& key, const QVariant& value);
    void rowChanged(int row);
    bool refuse(const Field& field);
    void setRefusal(const QString& text);

    store::Store* store_ = nullptr;
    AppSettings* defaults_ = nullptr;
    qint64 conversationId_ = -1;
    QVariantMap overrides_;
    QString refusal_;
};

}  // namespace cairn::app
