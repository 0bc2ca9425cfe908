#pragma once

#include <string>

namespace scalelab {

// docs/fields.md: every experiment field of the field table (spec_fields.h) as a reference for
// config and lesson files, flags and the form: key, flag, form label, default, the values it
// takes, when it applies, and what it does. `scalelab-cli fields` prints it; test_spec_fields
// checks that docs/fields.md is exactly this text.
std::string field_reference_markdown();

}  // namespace scalelab
