// Internal to runtime/report: the page's script (ReportScript.cpp).
#pragma once

namespace evoc::report {

/// The report page's JavaScript (reads the JSON document in #data).
const char *reportScript();

} // namespace evoc::report
