#pragma once

#include <sstream>
#include <string>

namespace scalelab::optim {

// A number as a message shows it ("0.9", "1e-05"): the stream's default format, six
// significant digits.
inline std::string format_number(double value) {
    std::ostringstream out;
    out << value;
    return out.str();
}

}  // namespace scalelab::optim
