#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "train/run_spec.h"

namespace scalelab {

// Every value of each RunSpec enum, in declaration order, so that generic code (JSON fields,
// CLI flags, help texts and messages) can list the choices and read a name back through the
// engine's to_string(). One specialisation per enum; a new enum needs one more here.
template <typename Enum>
struct EnumValues;

template <>
struct EnumValues<ScheduleKind> {
    static constexpr ScheduleKind all[] = {ScheduleKind::Constant,  ScheduleKind::Step,
                                           ScheduleKind::MultiStep, ScheduleKind::Cosine,
                                           ScheduleKind::Poly,      ScheduleKind::Exp};
};
template <>
struct EnumValues<WarmupUnit> {
    static constexpr WarmupUnit all[] = {WarmupUnit::Epochs, WarmupUnit::Steps};
};
template <>
struct EnumValues<WarmupKind> {
    static constexpr WarmupKind all[] = {WarmupKind::Gradual, WarmupKind::PerEpoch,
                                         WarmupKind::Constant};
};
template <>
struct EnumValues<OptimizerKind> {
    static constexpr OptimizerKind all[] = {OptimizerKind::Sgd, OptimizerKind::Lars,
                                            OptimizerKind::Lamb, OptimizerKind::NovoGrad,
                                            OptimizerKind::AdamW};
};
template <>
struct EnumValues<LrScaling> {
    static constexpr LrScaling all[] = {LrScaling::None, LrScaling::Linear, LrScaling::Sqrt};
};
template <>
struct EnumValues<Augmentation> {
    static constexpr Augmentation all[] = {Augmentation::None, Augmentation::Flip,
                                           Augmentation::CropFlip, Augmentation::Assessment};
};
template <>
struct EnumValues<DeviceKind> {
    static constexpr DeviceKind all[] = {DeviceKind::Cpu, DeviceKind::Gpu};
};

// The value whose to_string() is `name`; nothing when none is.
template <typename Enum>
std::optional<Enum> parse_enum(std::string_view name) {
    for (Enum value : EnumValues<Enum>::all)
        if (to_string(value) == name)
            return value;
    return std::nullopt;
}

// The names of every value, each between `quote`s, joined by `separator`:
// enum_choices<LrScaling>("|") is "none|linear|sqrt".
template <typename Enum>
std::string enum_choices(std::string_view separator, std::string_view quote = "") {
    std::string out;
    for (Enum value : EnumValues<Enum>::all) {
        if (!out.empty())
            out += separator;
        out.append(quote).append(to_string(value)).append(quote);
    }
    return out;
}

}  // namespace scalelab
