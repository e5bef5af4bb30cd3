// strftime with C-locale names, independent of the process locale (the app sets one).
#include "builtins.h"

#include <cstdio>

namespace cairn::chat {

std::string formatTime(const std::string& format, const std::tm& t) {
    static const char* days[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
    static const char* months[] = {"January", "February", "March",     "April",   "May",      "June",
                                   "July",    "August",   "September", "October", "November", "December"};
    std::string out;
    char buf[64];
    for (size_t i = 0; i < format.size(); ++i) {
        if (format[i] != '%' || i + 1 >= format.size()) {
            out += format[i];
            continue;
        }
        char c = format[++i];
        bool noPad = false;
        if (c == '-' && i + 1 < format.size()) {
            noPad = true;
            c = format[++i];
        }
        auto num = [&](int v, int width) {
            if (noPad) std::snprintf(buf, sizeof buf, "%d", v);
            else std::snprintf(buf, sizeof buf, "%0*d", width, v);
            out += buf;
        };
        int wday = ((t.tm_wday % 7) + 7) % 7, mon = ((t.tm_mon % 12) + 12) % 12;
        switch (c) {
        case 'Y': num(t.tm_year + 1900, 1); break;
        case 'y': num((t.tm_year + 1900) % 100, 2); break;
        case 'm': num(t.tm_mon + 1, 2); break;
        case 'd': num(t.tm_mday, 2); break;
        case 'e':
            if (noPad) num(t.tm_mday, 1);
            else {
                std::snprintf(buf, sizeof buf, "%2d", t.tm_mday);
                out += buf;
            }
            break;
        case 'H': num(t.tm_hour, 2); break;
        case 'I': num(t.tm_hour % 12 == 0 ? 12 : t.tm_hour % 12, 2); break;
        case 'M': num(t.tm_min, 2); break;
        case 'S': num(t.tm_sec, 2); break;
        case 'j': num(t.tm_yday + 1, 3); break;
        case 'p': out += t.tm_hour < 12 ? "AM" : "PM"; break;
        case 'a': out += std::string(days[wday]).substr(0, 3); break;
        case 'A': out += days[wday]; break;
        case 'b':
        case 'h': out += std::string(months[mon]).substr(0, 3); break;
        case 'B': out += months[mon]; break;
        case 'F':
            std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday);
            out += buf;
            break;
        case 'T':
            std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", t.tm_hour, t.tm_min, t.tm_sec);
            out += buf;
            break;
        case 'D':
            std::snprintf(buf, sizeof buf, "%02d/%02d/%02d", t.tm_mon + 1, t.tm_mday, (t.tm_year + 1900) % 100);
            out += buf;
            break;
        case 'w': num(wday, 1); break;
        case '%': out += '%'; break;
        default:
            out += '%';
            if (noPad) out += '-';
            out += c;
            break;
        }
    }
    return out;
}

}  // namespace cairn::chat
