// The report page's script. It lives in report.js; the build embeds it
// (EmbedScript.cmake), so the page needs no file beside it.
#include "report/ReportPage.h"

#include "ReportScriptText.h"

namespace evoc::report {

const char *reportScript() { return kReportScriptText; }

} // namespace evoc::report
