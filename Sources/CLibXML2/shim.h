// libxml2's HTML parser and XPath, for the `images` source.
// Headers are <prefix>/include/libxml2/libxml/*.h; pkg-config (libxml-2.0) adds the include path.
#include <libxml/xmlversion.h>
// Debian builds libxml2 with ICU: encoding.h would pull in <unicode/ucnv.h>, whose UErrorCode
// clashes with Foundation's bundled ICU in any module that sees both. We never use the members
// that depend on it.
#undef LIBXML_ICU_ENABLED
#include <libxml/HTMLparser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <libxml/tree.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>

// xmlFree is a global function-pointer variable, which Swift 6 rejects as not concurrency-safe.
static inline void rivulet_xml_free(void *pointer) { xmlFree(pointer); }

// libxml2 prints encoding and XPath errors to standard error through its generic handler (one
// per thread), whatever the parser's options; the images source reports errors itself.
static void rivulet_xml_ignore(void *context, const char *message, ...) { (void)context; (void)message; }
static inline void rivulet_xml_silence(void) { xmlSetGenericErrorFunc(NULL, rivulet_xml_ignore); }
