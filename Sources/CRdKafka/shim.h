#ifndef CRDKAFKA_SHIM_H
#define CRDKAFKA_SHIM_H
// rdkafka.h must come before rdkafka_mock.h.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

// MARK: Macro wrappers (the Swift importer cannot expand function-like macros)

static inline int64_t CRdKafka_OFFSET_BEGINNING(void) { return RD_KAFKA_OFFSET_BEGINNING; }
static inline int64_t CRdKafka_OFFSET_END(void) { return RD_KAFKA_OFFSET_END; }
static inline int64_t CRdKafka_OFFSET_STORED(void) { return RD_KAFKA_OFFSET_STORED; }
static inline int64_t CRdKafka_OFFSET_INVALID(void) { return RD_KAFKA_OFFSET_INVALID; }
static inline int32_t CRdKafka_PARTITION_UA(void) { return RD_KAFKA_PARTITION_UA; }

#endif
