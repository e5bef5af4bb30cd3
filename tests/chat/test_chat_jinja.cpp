// Unit tests of the Jinja interpreter through the public ChatTemplate API: each
// language piece (whitespace control, expressions, statements, filters, tests,
// methods, globals, Undefined, sandbox, errors) against strings that Python's
// jinja2 produced (jinja_cases.cpp), plus the ChatML fallback.
#include "cairn/chat_template.h"
#include "jinja_cases.h"

#include <nlohmann/json.hpp>

#include <QElapsedTimer>
#include <QRegularExpression>
#include <QTest>

#include <atomic>
#include <thread>

using namespace cairn;

namespace {

// The moment the generator used for strftime_now: 2024-02-29 13:05:09, a Thursday.
std::tm fixedClock() {
    std::tm t{};
    t.tm_year = 124;
    t.tm_mon = 1;
    t.tm_mday = 29;
    t.tm_hour = 13;
    t.tm_min = 5;
    t.tm_sec = 9;
    t.tm_wday = 4;
    t.tm_yday = 59;
    return t;
}

std::string renderWith(const std::string& source, const nlohmann::ordered_json& variables) {
    ChatRenderOptions options;
    options.clock = fixedClock;
    // Variables of the case replace the chat ones; messages default to an empty conversation.
    auto messages = variables.contains("messages") ? variables["messages"] : nlohmann::ordered_json::array();
    auto extra = variables;
    extra.erase("messages");
    options.extraVariables = std::make_shared<nlohmann::ordered_json>(extra);
    return ChatTemplate(source).render(messages, options);
}

}  // namespace

class TestChatJinja : public QObject {
    Q_OBJECT
private slots:
    void rendersLikeJinja2_data() {
        QTest::addColumn<int>("index");
        for (size_t i = 0; i < kRenderCaseCount; ++i) QTest::newRow(kRenderCases[i].name) << int(i);
    }
    void rendersLikeJinja2() {
        QFETCH(int, index);
        const RenderCase& c = kRenderCases[index];
        std::string out;
        try {
            out = renderWith(c.source, nlohmann::ordered_json::parse(c.variables));
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        QCOMPARE(QString::fromStdString(out), QString::fromUtf8(c.expected));
    }

    void runtimeErrorsRaiseTemplateError_data() {
        QTest::addColumn<int>("index");
        for (size_t i = 0; i < kRuntimeErrorCount; ++i) QTest::newRow(kRuntimeErrors[i].name) << int(i);
    }
    void runtimeErrorsRaiseTemplateError() {
        QFETCH(int, index);
        ChatTemplate t(kRuntimeErrors[index].source);  // parses
        QVERIFY_THROWS_EXCEPTION(TemplateError, t.render(nlohmann::ordered_json::array()));
    }

    void parseErrorsNameLineAndColumn_data() {
        QTest::addColumn<int>("index");
        for (size_t i = 0; i < kParseErrorCount; ++i) QTest::newRow(kParseErrors[i].name) << int(i);
    }
    void parseErrorsNameLineAndColumn() {
        QFETCH(int, index);
        try {
            ChatTemplate t(kParseErrors[index].source);
            QFAIL("no parse error");
        } catch (const TemplateError&) {
            QFAIL("a parse error must not be a TemplateError");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("line ") != std::string::npos, e.what());
            QVERIFY2(std::string(e.what()).find("column ") != std::string::npos, e.what());
        }
    }

    void parseErrorPointsAtTheLine() {
        try {
            ChatTemplate t("line1\nline2 {% endfor %}");
            QFAIL("no parse error");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("line 2, column 7") != std::string::npos, e.what());
        }
    }

    void raiseExceptionCarriesTheMessage() {
        ChatTemplate t("{% if messages|length == 0 %}{{ raise_exception('no messages given') }}{% endif %}");
        try {
            t.render(nlohmann::ordered_json::array());
            QFAIL("no error");
        } catch (const TemplateError& e) {
            QVERIFY2(std::string(e.what()).find("no messages given") != std::string::npos, e.what());
        }
    }

    void messageContentIsData() {
        const std::string content = "{{ 7 * 7 }} {% if %} {# x #} {% raw %}";
        ChatTemplate t("{% for m in messages %}[{{ m.content }}]{% endfor %}");
        QCOMPARE(t.render(std::vector<ChatMessage>{{"user", content}}), "[" + content + "]");
    }

    // Message text is decoded by the engine's one UTF-8 codec (the tokenizer's): an
    // overlong '<' (C0 BC), a surrogate (ED A0 80), a byte past U+10FFFF (F5) and a cut
    // character (E2 82) are one U+FFFD per byte; none of them becomes a character.
    void invalidUtf8IsOneReplacementPerByte() {
        const std::string content = "\xC0\xBC"
                                    "b"
                                    "\xED\xA0\x80"
                                    "\xF5\x80"
                                    "\xE2\x82";
        const std::string r = "\xEF\xBF\xBD";
        ChatTemplate t("{% for m in messages %}{{ m.content|length }}|{{ m.content|lower }}|"
                       "{{ m.content[2] }}{% endfor %}");
        QCOMPARE(t.render(std::vector<ChatMessage>{{"user", content}}),
                 "10|" + r + r + "b" + r + r + r + r + r + r + r + "|b");
    }

    void standardVariables() {
        ChatTemplate t("{{ bos_token }}|{{ eos_token }}|{{ add_generation_prompt }}|{{ tools is none }}|"
                       "{{ documents is defined }}|{{ enable_thinking is defined }}|{{ messages|length }}");
        ChatRenderOptions o;
        o.bosToken = "<s>";
        o.eosToken = "</s>";
        o.addGenerationPrompt = true;
        QCOMPARE(t.render(std::vector<ChatMessage>{{"user", "x"}}, o), std::string("<s>|</s>|True|True|True|False|1"));
        o.extraVariables = std::make_shared<nlohmann::ordered_json>(nlohmann::ordered_json{{"enable_thinking", false}});
        QCOMPARE(t.render(std::vector<ChatMessage>{}, o), std::string("<s>|</s>|True|True|True|True|0"));
    }

    void vectorAndJsonMessagesRenderTheSame() {
        ChatTemplate t("{% for m in messages %}{{ m|tojson }}{% endfor %}");
        std::vector<ChatMessage> msgs = {{"system", "s"}, {"user", "é\n\"q\""}};
        auto j = nlohmann::ordered_json::array();
        for (const auto& m : msgs) j.push_back({{"role", m.role}, {"content", m.content}});
        QCOMPARE(t.render(msgs), t.render(j));
        QCOMPARE(t.render(msgs),
                 std::string(
                     "{\"role\": \"system\", \"content\": \"s\"}{\"role\": \"user\", \"content\": \"é\\n\\\"q\\\"\"}"));
    }

    void jsonKeyOrderIsKept() {
        auto j = nlohmann::ordered_json::parse("[{\"z\": 1, \"role\": \"user\", \"a\": 2}]");
        QCOMPARE(ChatTemplate("{{ messages[0]|tojson }}").render(j),
                 std::string("{\"z\": 1, \"role\": \"user\", \"a\": 2}"));
    }

    void strftimeUsesTheInjectedClock() {
        ChatTemplate t("{{ strftime_now('%d %B %Y') }}");
        ChatRenderOptions o;
        o.clock = fixedClock;
        QCOMPARE(t.render(std::vector<ChatMessage>{}, o), std::string("29 February 2024"));
        o.clock = nullptr;  // the real clock: the shape and a plausible year
        std::string now = t.render(std::vector<ChatMessage>{}, o);
        QVERIFY2(QRegularExpression("^\\d\\d [A-Z][a-z]+ 20\\d\\d$").match(QString::fromStdString(now)).hasMatch(),
                 now.c_str());
        QVERIFY(now != "29 February 2024");
    }

    void deepNestingIsAnErrorNotACrash() {
        std::string deep = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
        QVERIFY_THROWS_EXCEPTION(Error, ChatTemplate{deep});
        ChatTemplate recursive("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
        QVERIFY_THROWS_EXCEPTION(TemplateError, recursive.render(nlohmann::ordered_json::array()));
        ChatTemplate huge("{{ 'x' * 1000000000 }}");
        QVERIFY_THROWS_EXCEPTION(TemplateError, huge.render(nlohmann::ordered_json::array()));
    }

    void chatMLFallback() {
        std::vector<ChatMessage> msgs = {{"system", "Be brief."}, {"user", "Hi"}};
        const std::string expected = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n";
        QCOMPARE(renderChatML(msgs, false), expected);
        QCOMPARE(renderChatML(msgs, true), expected + "<|im_start|>assistant\n");

        ChatRenderOptions o;
        o.addGenerationPrompt = true;
        auto good = renderChat("{% for m in messages %}{{ m.role }}:{{ m.content }};{% endfor %}", msgs, o);
        QVERIFY(!good.usedFallback);
        QCOMPARE(good.text, std::string("system:Be brief.;user:Hi;"));

        for (const char* bad : {"", "{% if %}", "{{ raise_exception('System role not supported') }}", "{{ x.y.z }}"}) {
            auto r = renderChat(bad, msgs, o);
            QVERIFY2(r.usedFallback, bad);
            QVERIFY(!r.fallbackReason.empty());
            QCOMPARE(r.text, expected + "<|im_start|>assistant\n");
        }
        auto raised = renderChat("{{ raise_exception('System role not supported') }}", msgs, o);
        QVERIFY2(raised.fallbackReason.find("System role not supported") != std::string::npos,
                 raised.fallbackReason.c_str());
    }

    void messagesFromJson() {
        auto msgs = chatMessagesFromJson(nlohmann::ordered_json::parse(
            "[{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"assistant\", \"content\": null}]"));
        QCOMPARE(msgs.size(), size_t(2));
        QCOMPARE(msgs[0].content, std::string("a"));
        QCOMPARE(msgs[1].content, std::string());
        QVERIFY_THROWS_EXCEPTION(Error, chatMessagesFromJson(nlohmann::ordered_json::parse("{\"role\": \"user\"}")));
        QVERIFY_THROWS_EXCEPTION(Error, chatMessagesFromJson(nlohmann::ordered_json::parse("[{\"content\": \"x\"}]")));
    }

    // Every builtin with arguments of every type: a value or a cairn::Error, never a crash
    // (the sanitizer build checks memory), and each outcome the same on a second run.
    void builtinsWithAnyArgumentTypes() {
        const char* values[] = {"none", "true", "-2", "2.5", "'s'", "[1, 'a']", "{'k': 1}", "nope", "(1, 2)"};
        const char* calls[] = {"|abs",
                               "|batch(A)",
                               "|center(A)",
                               "|default(A)",
                               "|dictsort",
                               "|first",
                               "|float(A)",
                               "|format(A)",
                               "|indent(A)",
                               "|int(A)",
                               "|int(0, A)",
                               "|items",
                               "|join(A)",
                               "|last",
                               "|length",
                               "|list",
                               "|map(A)",
                               "|max",
                               "|min",
                               "|reject(A)",
                               "|rejectattr(A)",
                               "|replace(A, A)",
                               "|reverse",
                               "|round(A)",
                               "|select(A)",
                               "|selectattr(A)",
                               "|slice(A)",
                               "|sort(A)",
                               "|sum(A)",
                               "|title",
                               "|tojson(indent=A)",
                               "|trim(A)",
                               "|truncate(A)",
                               "|unique",
                               "|wordcount",
                               ".strip(A)",
                               ".split(A)",
                               ".split(',', A)",
                               ".startswith(A)",
                               ".replace(A, A)",
                               ".find(A)",
                               ".count(A)",
                               ".join(A)",
                               ".format(A)",
                               ".center(A)",
                               ".zfill(A)",
                               ".partition(A)",
                               ".get(A)",
                               ".items()",
                               ".index(A)",
                               "[A]",
                               "[A:A]",
                               " is divisibleby(A)",
                               " is in(A)",
                               " is lt(A)",
                               " ** A",
                               " // A",
                               " % A",
                               " + A",
                               " < A"};
        int rendered = 0, failed = 0;
        for (const char* v : values)
            for (const char* a : values)
                for (const char* c : calls) {
                    std::string call = c;
                    for (size_t p; (p = call.find('A')) != std::string::npos;) call.replace(p, 1, a);
                    std::string source = std::string("{{ (") + v + ")" + call + " }}";
                    std::string first, second;
                    try {
                        first = ChatTemplate(source).render(nlohmann::ordered_json::array());
                        ++rendered;
                    } catch (const Error& e) {
                        first = std::string("error: ") + e.what();
                        ++failed;
                    }
                    try {
                        second = ChatTemplate(source).render(nlohmann::ordered_json::array());
                    } catch (const Error& e) {
                        second = std::string("error: ") + e.what();
                    }
                    QCOMPARE(second, first);
                }
        QVERIFY(rendered > 0 && failed > 0);
    }

    // Random edits of a template that uses most of the language: each result renders or
    // throws cairn::Error; nothing hangs or crashes.
    void mutatedTemplatesFailCleanly() {
        const std::string base =
            "{%- macro fmt(v) -%}{%- if v is mapping -%}{ {%- for k, x in v|dictsort %}{{ k }}:{{ fmt(x) }}{% endfor "
            "-%} }"
            "{%- elif v is string %}'{{ v|trim }}'{% else %}{{ v|tojson }}{% endif -%}{%- endmacro -%}\n"
            "{%- set ns = namespace(n=0, sys='') -%}\n{%- if messages[0].role == 'system' -%}{%- set ns.sys = "
            "messages[0].content -%}{%- endif -%}\n"
            "{%- for m in messages if m.role != 'system' -%}\n  {%- set ns.n = ns.n + 1 -%}\n"
            "  {{ '<|' ~ m.role ~ '|>' }}{{ m.content.split('</think>')[-1].strip() if m.role == 'assistant' else "
            "m.content }}"
            "{% if loop.last and add_generation_prompt %}<|assistant|>{% endif %}\n{%- else -%}{{ "
            "raise_exception('empty') }}"
            "{%- endfor -%}\n{{ fmt({'n': ns.n, 's': ns.sys, 'l': [1, 2.5, none]}) }}{# done #}";
        nlohmann::ordered_json messages = nlohmann::ordered_json::parse(
            "[{\"role\": \"system\", \"content\": \" s \"}, {\"role\": \"user\", \"content\": \"h\u00e9\"},"
            " {\"role\": \"assistant\", \"content\": \"<think>x</think> a\"}]");
        ChatRenderOptions o;
        o.addGenerationPrompt = true;
        QVERIFY(!ChatTemplate(base).render(messages, o).empty());
        const char* fragments[] = {"{{",
                                   "}}",
                                   "{%",
                                   "%}",
                                   "{#",
                                   "-",
                                   "(",
                                   ")",
                                   "[",
                                   "'",
                                   "|",
                                   ".",
                                   " if ",
                                   "endfor",
                                   "loop",
                                   "\\",
                                   "\n",
                                   "\xc3",
                                   "99999999999999999999",
                                   "**",
                                   ":",
                                   ",",
                                   "not ",
                                   " is "};
        uint32_t state = 12345;
        auto rnd = [&state] {
            state = state * 1664525u + 1013904223u;
            return state >> 8;
        };
        int parsed = 0, renderedOk = 0;
        for (int i = 0; i < 3000; ++i) {
            std::string s = base;
            for (int k = 0, edits = 1 + int(rnd() % 3); k < edits; ++k) {
                size_t pos = rnd() % s.size();
                if (rnd() % 2) s.erase(pos, 1 + rnd() % 6);
                else s.insert(pos, fragments[rnd() % (sizeof fragments / sizeof *fragments)]);
            }
            try {
                ChatTemplate t(s);
                ++parsed;
                t.render(messages, o);
                ++renderedOk;
            } catch (const Error&) {}
        }
        QVERIFY(parsed > 0 && renderedOk > 0 && parsed < 3000);
    }

    // ---- the evaluation budget ----

    static std::string renderError(const std::string& source, const ChatRenderOptions& o) {
        try {
            ChatTemplate(source).render(nlohmann::ordered_json::array(), o);
        } catch (const TemplateError& e) {
            return e.what();
        }
        return "rendered";
    }

    void budgetLimitsAreNamed() {
        ChatRenderOptions o;
        o.limits.maxSteps = 1000;
        std::string e = renderError("{% for i in range(100000) %}{% endfor %}", o);
        QVERIFY2(e.find("exceeded the step budget (1000 steps)") != std::string::npos, e.c_str());
        o = ChatRenderOptions();
        o.limits.maxBytes = 1 << 20;
        e = renderError("{{ 'x' * 2000000 }}", o);
        QVERIFY2(e.find("exceeded the memory budget (1 MiB)") != std::string::npos, e.c_str());
        QCOMPARE(renderError("{{ ('x' * 500000)|length }}", o), std::string("rendered"));
        o = ChatRenderOptions();
        o.limits.maxDepth = 50;
        e = renderError(
            "{% set ns = namespace(x=1) %}{% for i in range(100) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}", o);
        QVERIFY2(e.find("exceeded the depth limit (50 levels)") != std::string::npos, e.c_str());
        QVERIFY2(e.find('\n') == std::string::npos, e.c_str());
    }

    void budgetCountsEveryKindOfUse() {
        ChatRenderStats stats;
        ChatRenderOptions o;
        o.stats = &stats;
        std::string out = ChatTemplate("{% for m in messages %}{{ [m.content] * 3 }}{% endfor %}")
                              .render(std::vector<ChatMessage>{{"user", std::string(10000, 'a')}}, o);
        QCOMPARE(out.size(), size_t(30012));  // ['a...', 'a...', 'a...']
        QVERIFY(stats.steps > 3);
        QVERIFY2(stats.peakBytes >= out.size(), std::to_string(stats.peakBytes).c_str());  // the output is charged
        QVERIFY2(stats.peakBytes < 10 * out.size(), std::to_string(stats.peakBytes).c_str());
        QVERIFY(stats.peakDepth >= 2);
        // A failing render reports what it used too.
        o.limits.maxSteps = 100;
        QVERIFY_THROWS_EXCEPTION(
            TemplateError,
            ChatTemplate("{% for i in range(1000) %}{% endfor %}").render(std::vector<ChatMessage>{}, o));
        QVERIFY(stats.steps > 100 && stats.steps < 5000);  // range(1000) is charged as a whole
    }

    void cancelStopsARender() {
        std::atomic<bool> cancel{true};
        ChatRenderOptions o;
        o.cancel = &cancel;
        QVERIFY_THROWS_EXCEPTION(
            TemplateCancelled,
            ChatTemplate("{% for i in range(100000) %}{% endfor %}").render(std::vector<ChatMessage>{}, o));
        // From another thread, while a template loops (it would need 2^40 iterations).
        cancel = false;
        o.limits.maxSteps = UINT64_MAX / 2;
        ChatTemplate endless("{% for a in range(1024) %}{% for b in range(1024) %}{% for c in range(1024) %}"
                             "{% for d in range(1024) %}{% endfor %}{% endfor %}{% endfor %}{% endfor %}");
        std::thread stopper([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            cancel = true;
        });
        QElapsedTimer timer;
        timer.start();
        bool cancelled = false;
        try {
            endless.render(std::vector<ChatMessage>{}, o);
        } catch (const TemplateCancelled& e) {
            cancelled = std::string(e.what()).find("cancelled") != std::string::npos;
        }
        stopper.join();
        QVERIFY(cancelled);
        QVERIFY2(timer.elapsed() < 3000, std::to_string(timer.elapsed()).c_str());
        // renderChat does not replace a cancelled render with ChatML.
        QVERIFY_THROWS_EXCEPTION(TemplateCancelled, renderChat("{% for i in range(100000) %}{% endfor %}", {}, o));
    }

    void renderChatFallsBackWhenTheBudgetIsExceeded() {
        ChatRenderOptions o;
        o.limits.maxSteps = 1000;
        auto r = renderChat("{% for i in range(100000) %}{% endfor %}x", {{"user", "hi"}}, o);
        QVERIFY(r.usedFallback);
        QVERIFY2(r.fallbackReason.find("step budget") != std::string::npos, r.fallbackReason.c_str());
        QCOMPARE(r.text, renderChatML({{"user", "hi"}}, false));
    }

    void deepVariablesAreRefused() {
        nlohmann::ordered_json deep = 1;
        for (int i = 0; i < 2000; ++i) deep = nlohmann::ordered_json::array({deep});
        ChatRenderOptions o;
        o.extraVariables = std::make_shared<nlohmann::ordered_json>(nlohmann::ordered_json{{"deep", deep}});
        QVERIFY_THROWS_EXCEPTION(Error, ChatTemplate("{{ deep }}").render(std::vector<ChatMessage>{}, o));
    }

    void errorMessagesAreBoundedLines() {
        std::string e = renderError("{{ raise_exception('line one\nline two ' * 1000) }}", {});
        QVERIFY2(e.find('\n') == std::string::npos, e.c_str());
        QVERIFY2(e.size() < 400, e.c_str());
        QVERIFY2(e.find("line one line two") != std::string::npos, e.c_str());
    }

    void movedTemplateStillRenders() {
        ChatTemplate a("{{ 1 + 1 }}");
        ChatTemplate b(std::move(a));
        QCOMPARE(b.render(nlohmann::ordered_json::array()), std::string("2"));
    }
};

QTEST_APPLESS_MAIN(TestChatJinja)
#include "test_chat_jinja.moc"
