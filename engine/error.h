#pragma once

#include <stdexcept>
#include <string>

namespace scalelab {

// What kind of mistake an error is, so that a front end can choose its exit code or dialog:
// the first three are the user's to fix (a flag, a file, the machine), the last is ours.
enum class ErrorKind {
    InvalidSpec,     // a run spec field out of range or inconsistent with another
    DatasetMissing,  // a dataset folder or file that is not there
    DatasetCorrupt,  // a dataset file that is there but is not what it claims to be
    OutOfMemory,     // the run does not fit in the device's memory
    SystemLimit,     // the machine will not give the run what it asks for (threads)
    Internal,        // a bug in ScaleLab or a library it calls
};

// The engine's one exception type. The message says what to change, in the user's words.
class Error : public std::runtime_error {
  public:
    Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    ErrorKind kind() const { return kind_; }

  private:
    ErrorKind kind_;
};

}  // namespace scalelab
