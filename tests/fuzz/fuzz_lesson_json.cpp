// Fuzzes the lesson file reader (resources/lessons/*.json and the user's own lessons). Input: the
// document, read once as on a machine without GPUs and once as on one with a GPU (the "gpu"
// block's setting), at full size and at test size; corpus/lesson_json holds shipped lessons and
// a few broken ones.

#include <QByteArray>
#include <QString>

#include <cstddef>
#include <cstdint>

#include "fuzz_input.h"
#include "lesson.h"

using namespace scalelab;

namespace {

void read_lesson(const QByteArray& document, const DeviceInventory& devices, LessonSize size) {
    try {
        const Lesson lesson = parse_lesson(document, QStringLiteral("fuzz.json"), devices, size);
        fuzz::require(!lesson.title.isEmpty() && !lesson.charts.empty() && !lesson.runs.empty(),
                      "a lesson read has a title, charts and runs");
        for (const LessonRun& run : lesson.runs) {
            fuzz::require(!run.name.isEmpty(), "every run of a lesson read has a name");
            fuzz::require(run.spec.validate().empty(), "every run of a lesson read can start");
        }
    } catch (const LessonError&) {
        // A lesson refused with every problem and its line: what the reader promises.
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const QByteArray document =
        QByteArray::fromRawData(reinterpret_cast<const char*>(data), qsizetype(size));
    static const DeviceInventory laptop{};
    static const DeviceInventory gpu_machine{
        .gpus = {GpuDescription{.index = 0, .name = "fuzz GPU", .memory_bytes = 1ull << 34}},
        .cpu_cores = 2,
        .no_gpu_reason = {}};
    read_lesson(document, laptop, LessonSize::Full);
    read_lesson(document, gpu_machine, LessonSize::Test);
    return 0;
}
