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
static inline int CRdKafka_MSG_F_COPY(void) { return RD_KAFKA_MSG_F_COPY; }
static inline int CRdKafka_DESTROY_F_NO_CONSUMER_CLOSE(void) { return RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE; }
static inline int CRdKafka_PURGE_F_QUEUE(void) { return RD_KAFKA_PURGE_F_QUEUE; }
static inline int CRdKafka_PURGE_F_INFLIGHT(void) { return RD_KAFKA_PURGE_F_INFLIGHT; }
static inline int CRdKafka_EVENT_DR(void) { return RD_KAFKA_EVENT_DR; }
static inline int CRdKafka_EVENT_LOG(void) { return RD_KAFKA_EVENT_LOG; }
static inline int CRdKafka_EVENT_ERROR(void) { return RD_KAFKA_EVENT_ERROR; }
static inline int CRdKafka_EVENT_STATS(void) { return RD_KAFKA_EVENT_STATS; }
static inline int CRdKafka_EVENT_OFFSET_COMMIT(void) { return RD_KAFKA_EVENT_OFFSET_COMMIT; }

#endif
