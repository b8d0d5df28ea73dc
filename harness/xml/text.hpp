#pragma once
// Text for XML and HTML documents (the JUnit report of `harness check`, the libvirt domain,
// volume and pool XML, the HTML report): whatever a message holds (console text with ANSI
// colours, NUL, bytes that are not UTF-8), the result is well-formed XML 1.0 character data and
// attribute-value text. Rules (ours; XML 1.0 section 2.2 "Char"): & < > " ' become entities (so
// the text may sit in single- or double-quoted attribute values); ANSI escape sequences (CSI
// `ESC [ ... final`, OSC `ESC ] ... BEL|ESC \`, two-byte `ESC X`) are removed; tab, LF and
// valid UTF-8 are kept; every other character XML 1.0 forbids (C0 controls, U+FFFE, U+FFFF) and
// every byte that does not start a well-formed UTF-8 sequence (overlong forms and surrogates
// included) is written as the visible text `\xNN`, so nothing is lost silently. CR becomes
// `&#13;` (a parser would turn a raw CR into LF).
#include <string>
#include <string_view>

namespace harness::xml {

/// `s` (any bytes) escaped for XML 1.0 element content and quoted attribute values (also valid
/// HTML5 text), as above. Never throws except std::bad_alloc.
std::string xml_text(std::string_view s);

}  // namespace harness::xml
