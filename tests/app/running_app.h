// The real UI (qrc:/Cairn/Main.qml) offscreen on a ChatController with the
// tests' fast settings: what the end-to-end tests start, restart and drive. A
// test file using it imports the QML plugin itself
// (Q_IMPORT_QML_PLUGIN(CairnPlugin)) and links cairn_appplugin.
#pragma once

#include "app_test_support.h"
#include "chat_controller.h"

#include <QQmlApplicationEngine>
#include <QQuickWindow>
#include <QUrl>

#include <functional>
#include <memory>

namespace cairn::test {

struct RunningApp {
    std::unique_ptr<app::ChatController> controller;
    std::unique_ptr<QQmlApplicationEngine> engine;
    QQuickWindow* window = nullptr;

    // `prepare` runs before start() (e.g. to give the controller a keyring of the test's own).
    RunningApp(const app::AppPaths& paths, const QString& model,
               const std::function<void(app::ChatController&)>& prepare = {}) {
        controller = std::make_unique<app::ChatController>(paths);
        fastSettings(*controller->settings(), model);
        if (prepare) prepare(*controller);
        engine = std::make_unique<QQmlApplicationEngine>();
        engine->setInitialProperties({{QStringLiteral("controller"), QVariant::fromValue(controller.get())}});
        engine->load(QUrl(QStringLiteral("qrc:/Cairn/Main.qml")));
        if (!engine->rootObjects().isEmpty()) window = qobject_cast<QQuickWindow*>(engine->rootObjects().first());
        controller->start();
    }
    ~RunningApp() {
        engine.reset();  // the UI goes first, then the worker thread stops
        controller.reset();
    }
    template <class T>
    T* find(const char* name) {
        return window ? window->findChild<T*>(QString::fromLatin1(name)) : nullptr;
    }
};

}  // namespace cairn::test
