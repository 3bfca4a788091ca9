// Written by scripts/lazy-libraries.py: do not edit. 102 functions of <nats/nats.h>, each calling
// the library's own, which is loaded on the first call (see lazy_library.h).
#include <nats/nats.h>

#include "lazy_library.h"

static const char *const rivulet_nats_names[] = {
    "jsConsumerConfig_Init",
    "jsConsumerInfoList_Destroy",
    "jsConsumerInfo_Destroy",
    "jsConsumerNamesList_Destroy",
    "jsCtx_Destroy",
    "jsFetchRequest_Init",
    "jsMsgMetaData_Destroy",
    "jsOptions_Init",
    "jsPubAck_Destroy",
    "jsPubOptions_Init",
    "jsStreamConfig_Init",
    "jsStreamInfo_Destroy",
    "jsStreamNamesList_Destroy",
    "jsSubOptions_Init",
    "js_AddConsumer",
    "js_AddStream",
    "js_ConsumerNames",
    "js_Consumers",
    "js_CreateKeyValue",
    "js_DeleteConsumer",
    "js_GetConsumerInfo",
    "js_GetStreamInfo",
    "js_KeyValue",
    "js_Publish",
    "js_PublishAsyncComplete",
    "js_PublishMsg",
    "js_PublishMsgAsync",
    "js_PullSubscribe",
    "js_StreamNames",
    "js_UpdateConsumer",
    "kvConfig_Init",
    "kvEntry_Created",
    "kvEntry_Destroy",
    "kvEntry_Operation",
    "kvEntry_Revision",
    "kvEntry_ValueString",
    "kvStatus_Destroy",
    "kvStatus_TTL",
    "kvStore_CreateString",
    "kvStore_Delete",
    "kvStore_Destroy",
    "kvStore_Get",
    "kvStore_Keys",
    "kvStore_PutString",
    "kvStore_Status",
    "kvStore_UpdateString",
    "natsConnection_Close",
    "natsConnection_Connect",
    "natsConnection_ConnectTo",
    "natsConnection_Destroy",
    "natsConnection_Flush",
    "natsConnection_FlushTimeout",
    "natsConnection_GetConnectedUrl",
    "natsConnection_JetStream",
    "natsConnection_PublishMsg",
    "natsConnection_PublishRequestString",
    "natsConnection_QueueSubscribe",
    "natsConnection_RequestString",
    "natsConnection_Status",
    "natsConnection_Subscribe",
    "natsConnection_SubscribeSync",
    "natsInbox_Create",
    "natsInbox_Destroy",
    "natsMsgHeader_Get",
    "natsMsgHeader_Keys",
    "natsMsgHeader_Set",
    "natsMsgHeader_Values",
    "natsMsgList_Destroy",
    "natsMsg_Ack",
    "natsMsg_Create",
    "natsMsg_Destroy",
    "natsMsg_GetData",
    "natsMsg_GetDataLength",
    "natsMsg_GetMetaData",
    "natsMsg_GetSubject",
    "natsMsg_InProgress",
    "natsMsg_Nak",
    "natsMsg_NakWithDelay",
    "natsMsg_Term",
    "natsOptions_Create",
    "natsOptions_Destroy",
    "natsOptions_SetClosedCB",
    "natsOptions_SetDisconnectedCB",
    "natsOptions_SetMaxReconnect",
    "natsOptions_SetName",
    "natsOptions_SetReconnectBufSize",
    "natsOptions_SetReconnectWait",
    "natsOptions_SetReconnectedCB",
    "natsOptions_SetServers",
    "natsOptions_SetTimeout",
    "natsOptions_SetToken",
    "natsOptions_SetUserCredentialsFromFiles",
    "natsOptions_SetUserInfo",
    "natsStatus_GetText",
    "natsSubscription_Destroy",
    "natsSubscription_Fetch",
    "natsSubscription_FetchRequest",
    "natsSubscription_GetPending",
    "natsSubscription_NextMsg",
    "natsSubscription_Unsubscribe",
    "nats_GetLastError",
    "nats_Open",
};
static const char *const rivulet_nats_files[] = {"libnats.so.3.4", "libnats.so", NULL};
static void *rivulet_nats_pointers[102];
static struct rivulet_lazy_library rivulet_nats_library = {
    "libnats3.4 (the NATS C client)", rivulet_nats_files, rivulet_nats_names, rivulet_nats_pointers, 102, 0, NULL, "",
};

const char *rivulet_nats_load_error(void) { return rivulet_lazy_load_error(&rivulet_nats_library); }

static inline void *rivulet_nats_function(int index) { return rivulet_lazy_function(&rivulet_nats_library, index); }

natsStatus jsConsumerConfig_Init(jsConsumerConfig *p0) { return ((__typeof__(&jsConsumerConfig_Init))rivulet_nats_function(0))(p0); }
void jsConsumerInfoList_Destroy(jsConsumerInfoList *p0) { ((__typeof__(&jsConsumerInfoList_Destroy))rivulet_nats_function(1))(p0); }
void jsConsumerInfo_Destroy(jsConsumerInfo *p0) { ((__typeof__(&jsConsumerInfo_Destroy))rivulet_nats_function(2))(p0); }
void jsConsumerNamesList_Destroy(jsConsumerNamesList *p0) { ((__typeof__(&jsConsumerNamesList_Destroy))rivulet_nats_function(3))(p0); }
void jsCtx_Destroy(jsCtx *p0) { ((__typeof__(&jsCtx_Destroy))rivulet_nats_function(4))(p0); }
natsStatus jsFetchRequest_Init(jsFetchRequest *p0) { return ((__typeof__(&jsFetchRequest_Init))rivulet_nats_function(5))(p0); }
void jsMsgMetaData_Destroy(jsMsgMetaData *p0) { ((__typeof__(&jsMsgMetaData_Destroy))rivulet_nats_function(6))(p0); }
natsStatus jsOptions_Init(jsOptions *p0) { return ((__typeof__(&jsOptions_Init))rivulet_nats_function(7))(p0); }
void jsPubAck_Destroy(jsPubAck *p0) { ((__typeof__(&jsPubAck_Destroy))rivulet_nats_function(8))(p0); }
natsStatus jsPubOptions_Init(jsPubOptions *p0) { return ((__typeof__(&jsPubOptions_Init))rivulet_nats_function(9))(p0); }
natsStatus jsStreamConfig_Init(jsStreamConfig *p0) { return ((__typeof__(&jsStreamConfig_Init))rivulet_nats_function(10))(p0); }
void jsStreamInfo_Destroy(jsStreamInfo *p0) { ((__typeof__(&jsStreamInfo_Destroy))rivulet_nats_function(11))(p0); }
void jsStreamNamesList_Destroy(jsStreamNamesList *p0) { ((__typeof__(&jsStreamNamesList_Destroy))rivulet_nats_function(12))(p0); }
natsStatus jsSubOptions_Init(jsSubOptions *p0) { return ((__typeof__(&jsSubOptions_Init))rivulet_nats_function(13))(p0); }
natsStatus js_AddConsumer(jsConsumerInfo **p0, jsCtx *p1, const char *p2, jsConsumerConfig *p3, jsOptions *p4, jsErrCode *p5) { return ((__typeof__(&js_AddConsumer))rivulet_nats_function(14))(p0, p1, p2, p3, p4, p5); }
natsStatus js_AddStream(jsStreamInfo **p0, jsCtx *p1, jsStreamConfig *p2, jsOptions *p3, jsErrCode *p4) { return ((__typeof__(&js_AddStream))rivulet_nats_function(15))(p0, p1, p2, p3, p4); }
natsStatus js_ConsumerNames(jsConsumerNamesList **p0, jsCtx *p1, const char *p2, jsOptions *p3, jsErrCode *p4) { return ((__typeof__(&js_ConsumerNames))rivulet_nats_function(16))(p0, p1, p2, p3, p4); }
natsStatus js_Consumers(jsConsumerInfoList **p0, jsCtx *p1, const char *p2, jsOptions *p3, jsErrCode *p4) { return ((__typeof__(&js_Consumers))rivulet_nats_function(17))(p0, p1, p2, p3, p4); }
natsStatus js_CreateKeyValue(kvStore **p0, jsCtx *p1, kvConfig *p2) { return ((__typeof__(&js_CreateKeyValue))rivulet_nats_function(18))(p0, p1, p2); }
natsStatus js_DeleteConsumer(jsCtx *p0, const char *p1, const char *p2, jsOptions *p3, jsErrCode *p4) { return ((__typeof__(&js_DeleteConsumer))rivulet_nats_function(19))(p0, p1, p2, p3, p4); }
natsStatus js_GetConsumerInfo(jsConsumerInfo **p0, jsCtx *p1, const char *p2, const char *p3, jsOptions *p4, jsErrCode *p5) { return ((__typeof__(&js_GetConsumerInfo))rivulet_nats_function(20))(p0, p1, p2, p3, p4, p5); }
natsStatus js_GetStreamInfo(jsStreamInfo **p0, jsCtx *p1, const char *p2, jsOptions *p3, jsErrCode *p4) { return ((__typeof__(&js_GetStreamInfo))rivulet_nats_function(21))(p0, p1, p2, p3, p4); }
natsStatus js_KeyValue(kvStore **p0, jsCtx *p1, const char *p2) { return ((__typeof__(&js_KeyValue))rivulet_nats_function(22))(p0, p1, p2); }
natsStatus js_Publish(jsPubAck **p0, jsCtx *p1, const char *p2, const void *p3, int p4, jsPubOptions *p5, jsErrCode *p6) { return ((__typeof__(&js_Publish))rivulet_nats_function(23))(p0, p1, p2, p3, p4, p5, p6); }
natsStatus js_PublishAsyncComplete(jsCtx *p0, jsPubOptions *p1) { return ((__typeof__(&js_PublishAsyncComplete))rivulet_nats_function(24))(p0, p1); }
natsStatus js_PublishMsg(jsPubAck **p0, jsCtx *p1, natsMsg *p2, jsPubOptions *p3, jsErrCode *p4) { return ((__typeof__(&js_PublishMsg))rivulet_nats_function(25))(p0, p1, p2, p3, p4); }
natsStatus js_PublishMsgAsync(jsCtx *p0, natsMsg **p1, jsPubOptions *p2) { return ((__typeof__(&js_PublishMsgAsync))rivulet_nats_function(26))(p0, p1, p2); }
natsStatus js_PullSubscribe(natsSubscription **p0, jsCtx *p1, const char *p2, const char *p3, jsOptions *p4, jsSubOptions *p5, jsErrCode *p6) { return ((__typeof__(&js_PullSubscribe))rivulet_nats_function(27))(p0, p1, p2, p3, p4, p5, p6); }
natsStatus js_StreamNames(jsStreamNamesList **p0, jsCtx *p1, jsOptions *p2, jsErrCode *p3) { return ((__typeof__(&js_StreamNames))rivulet_nats_function(28))(p0, p1, p2, p3); }
natsStatus js_UpdateConsumer(jsConsumerInfo **p0, jsCtx *p1, const char *p2, jsConsumerConfig *p3, jsOptions *p4, jsErrCode *p5) { return ((__typeof__(&js_UpdateConsumer))rivulet_nats_function(29))(p0, p1, p2, p3, p4, p5); }
natsStatus kvConfig_Init(kvConfig *p0) { return ((__typeof__(&kvConfig_Init))rivulet_nats_function(30))(p0); }
int64_t kvEntry_Created(kvEntry *p0) { return ((__typeof__(&kvEntry_Created))rivulet_nats_function(31))(p0); }
void kvEntry_Destroy(kvEntry *p0) { ((__typeof__(&kvEntry_Destroy))rivulet_nats_function(32))(p0); }
kvOperation kvEntry_Operation(kvEntry *p0) { return ((__typeof__(&kvEntry_Operation))rivulet_nats_function(33))(p0); }
uint64_t kvEntry_Revision(kvEntry *p0) { return ((__typeof__(&kvEntry_Revision))rivulet_nats_function(34))(p0); }
const char *kvEntry_ValueString(kvEntry *p0) { return ((__typeof__(&kvEntry_ValueString))rivulet_nats_function(35))(p0); }
void kvStatus_Destroy(kvStatus *p0) { ((__typeof__(&kvStatus_Destroy))rivulet_nats_function(36))(p0); }
int64_t kvStatus_TTL(kvStatus *p0) { return ((__typeof__(&kvStatus_TTL))rivulet_nats_function(37))(p0); }
natsStatus kvStore_CreateString(uint64_t *p0, kvStore *p1, const char *p2, const char *p3) { return ((__typeof__(&kvStore_CreateString))rivulet_nats_function(38))(p0, p1, p2, p3); }
natsStatus kvStore_Delete(kvStore *p0, const char *p1) { return ((__typeof__(&kvStore_Delete))rivulet_nats_function(39))(p0, p1); }
void kvStore_Destroy(kvStore *p0) { ((__typeof__(&kvStore_Destroy))rivulet_nats_function(40))(p0); }
natsStatus kvStore_Get(kvEntry **p0, kvStore *p1, const char *p2) { return ((__typeof__(&kvStore_Get))rivulet_nats_function(41))(p0, p1, p2); }
natsStatus kvStore_Keys(kvKeysList *p0, kvStore *p1, kvWatchOptions *p2) { return ((__typeof__(&kvStore_Keys))rivulet_nats_function(42))(p0, p1, p2); }
natsStatus kvStore_PutString(uint64_t *p0, kvStore *p1, const char *p2, const char *p3) { return ((__typeof__(&kvStore_PutString))rivulet_nats_function(43))(p0, p1, p2, p3); }
natsStatus kvStore_Status(kvStatus **p0, kvStore *p1) { return ((__typeof__(&kvStore_Status))rivulet_nats_function(44))(p0, p1); }
natsStatus kvStore_UpdateString(uint64_t *p0, kvStore *p1, const char *p2, const char *p3, uint64_t p4) { return ((__typeof__(&kvStore_UpdateString))rivulet_nats_function(45))(p0, p1, p2, p3, p4); }
void natsConnection_Close(natsConnection *p0) { ((__typeof__(&natsConnection_Close))rivulet_nats_function(46))(p0); }
natsStatus natsConnection_Connect(natsConnection **p0, natsOptions *p1) { return ((__typeof__(&natsConnection_Connect))rivulet_nats_function(47))(p0, p1); }
natsStatus natsConnection_ConnectTo(natsConnection **p0, const char *p1) { return ((__typeof__(&natsConnection_ConnectTo))rivulet_nats_function(48))(p0, p1); }
void natsConnection_Destroy(natsConnection *p0) { ((__typeof__(&natsConnection_Destroy))rivulet_nats_function(49))(p0); }
natsStatus natsConnection_Flush(natsConnection *p0) { return ((__typeof__(&natsConnection_Flush))rivulet_nats_function(50))(p0); }
natsStatus natsConnection_FlushTimeout(natsConnection *p0, int64_t p1) { return ((__typeof__(&natsConnection_FlushTimeout))rivulet_nats_function(51))(p0, p1); }
natsStatus natsConnection_GetConnectedUrl(natsConnection *p0, char *p1, size_t p2) { return ((__typeof__(&natsConnection_GetConnectedUrl))rivulet_nats_function(52))(p0, p1, p2); }
natsStatus natsConnection_JetStream(jsCtx **p0, natsConnection *p1, jsOptions *p2) { return ((__typeof__(&natsConnection_JetStream))rivulet_nats_function(53))(p0, p1, p2); }
natsStatus natsConnection_PublishMsg(natsConnection *p0, natsMsg *p1) { return ((__typeof__(&natsConnection_PublishMsg))rivulet_nats_function(54))(p0, p1); }
natsStatus natsConnection_PublishRequestString(natsConnection *p0, const char *p1, const char *p2, const char *p3) { return ((__typeof__(&natsConnection_PublishRequestString))rivulet_nats_function(55))(p0, p1, p2, p3); }
natsStatus natsConnection_QueueSubscribe(natsSubscription **p0, natsConnection *p1, const char *p2, const char *p3, natsMsgHandler p4, void *p5) { return ((__typeof__(&natsConnection_QueueSubscribe))rivulet_nats_function(56))(p0, p1, p2, p3, p4, p5); }
natsStatus natsConnection_RequestString(natsMsg **p0, natsConnection *p1, const char *p2, const char *p3, int64_t p4) { return ((__typeof__(&natsConnection_RequestString))rivulet_nats_function(57))(p0, p1, p2, p3, p4); }
natsConnStatus natsConnection_Status(natsConnection *p0) { return ((__typeof__(&natsConnection_Status))rivulet_nats_function(58))(p0); }
natsStatus natsConnection_Subscribe(natsSubscription **p0, natsConnection *p1, const char *p2, natsMsgHandler p3, void *p4) { return ((__typeof__(&natsConnection_Subscribe))rivulet_nats_function(59))(p0, p1, p2, p3, p4); }
natsStatus natsConnection_SubscribeSync(natsSubscription **p0, natsConnection *p1, const char *p2) { return ((__typeof__(&natsConnection_SubscribeSync))rivulet_nats_function(60))(p0, p1, p2); }
natsStatus natsInbox_Create(natsInbox **p0) { return ((__typeof__(&natsInbox_Create))rivulet_nats_function(61))(p0); }
void natsInbox_Destroy(natsInbox *p0) { ((__typeof__(&natsInbox_Destroy))rivulet_nats_function(62))(p0); }
natsStatus natsMsgHeader_Get(natsMsg *p0, const char *p1, const char **p2) { return ((__typeof__(&natsMsgHeader_Get))rivulet_nats_function(63))(p0, p1, p2); }
natsStatus natsMsgHeader_Keys(natsMsg *p0, const char ***p1, int *p2) { return ((__typeof__(&natsMsgHeader_Keys))rivulet_nats_function(64))(p0, p1, p2); }
natsStatus natsMsgHeader_Set(natsMsg *p0, const char *p1, const char *p2) { return ((__typeof__(&natsMsgHeader_Set))rivulet_nats_function(65))(p0, p1, p2); }
natsStatus natsMsgHeader_Values(natsMsg *p0, const char *p1, const char ***p2, int *p3) { return ((__typeof__(&natsMsgHeader_Values))rivulet_nats_function(66))(p0, p1, p2, p3); }
void natsMsgList_Destroy(natsMsgList *p0) { ((__typeof__(&natsMsgList_Destroy))rivulet_nats_function(67))(p0); }
natsStatus natsMsg_Ack(natsMsg *p0, jsOptions *p1) { return ((__typeof__(&natsMsg_Ack))rivulet_nats_function(68))(p0, p1); }
natsStatus natsMsg_Create(natsMsg **p0, const char *p1, const char *p2, const char *p3, int p4) { return ((__typeof__(&natsMsg_Create))rivulet_nats_function(69))(p0, p1, p2, p3, p4); }
void natsMsg_Destroy(natsMsg *p0) { ((__typeof__(&natsMsg_Destroy))rivulet_nats_function(70))(p0); }
const char *natsMsg_GetData(const natsMsg *p0) { return ((__typeof__(&natsMsg_GetData))rivulet_nats_function(71))(p0); }
int natsMsg_GetDataLength(const natsMsg *p0) { return ((__typeof__(&natsMsg_GetDataLength))rivulet_nats_function(72))(p0); }
natsStatus natsMsg_GetMetaData(jsMsgMetaData **p0, natsMsg *p1) { return ((__typeof__(&natsMsg_GetMetaData))rivulet_nats_function(73))(p0, p1); }
const char *natsMsg_GetSubject(const natsMsg *p0) { return ((__typeof__(&natsMsg_GetSubject))rivulet_nats_function(74))(p0); }
natsStatus natsMsg_InProgress(natsMsg *p0, jsOptions *p1) { return ((__typeof__(&natsMsg_InProgress))rivulet_nats_function(75))(p0, p1); }
natsStatus natsMsg_Nak(natsMsg *p0, jsOptions *p1) { return ((__typeof__(&natsMsg_Nak))rivulet_nats_function(76))(p0, p1); }
natsStatus natsMsg_NakWithDelay(natsMsg *p0, int64_t p1, jsOptions *p2) { return ((__typeof__(&natsMsg_NakWithDelay))rivulet_nats_function(77))(p0, p1, p2); }
natsStatus natsMsg_Term(natsMsg *p0, jsOptions *p1) { return ((__typeof__(&natsMsg_Term))rivulet_nats_function(78))(p0, p1); }
natsStatus natsOptions_Create(natsOptions **p0) { return ((__typeof__(&natsOptions_Create))rivulet_nats_function(79))(p0); }
void natsOptions_Destroy(natsOptions *p0) { ((__typeof__(&natsOptions_Destroy))rivulet_nats_function(80))(p0); }
natsStatus natsOptions_SetClosedCB(natsOptions *p0, natsConnectionHandler p1, void *p2) { return ((__typeof__(&natsOptions_SetClosedCB))rivulet_nats_function(81))(p0, p1, p2); }
natsStatus natsOptions_SetDisconnectedCB(natsOptions *p0, natsConnectionHandler p1, void *p2) { return ((__typeof__(&natsOptions_SetDisconnectedCB))rivulet_nats_function(82))(p0, p1, p2); }
natsStatus natsOptions_SetMaxReconnect(natsOptions *p0, int p1) { return ((__typeof__(&natsOptions_SetMaxReconnect))rivulet_nats_function(83))(p0, p1); }
natsStatus natsOptions_SetName(natsOptions *p0, const char *p1) { return ((__typeof__(&natsOptions_SetName))rivulet_nats_function(84))(p0, p1); }
natsStatus natsOptions_SetReconnectBufSize(natsOptions *p0, int p1) { return ((__typeof__(&natsOptions_SetReconnectBufSize))rivulet_nats_function(85))(p0, p1); }
natsStatus natsOptions_SetReconnectWait(natsOptions *p0, int64_t p1) { return ((__typeof__(&natsOptions_SetReconnectWait))rivulet_nats_function(86))(p0, p1); }
natsStatus natsOptions_SetReconnectedCB(natsOptions *p0, natsConnectionHandler p1, void *p2) { return ((__typeof__(&natsOptions_SetReconnectedCB))rivulet_nats_function(87))(p0, p1, p2); }
natsStatus natsOptions_SetServers(natsOptions *p0, const char **p1, int p2) { return ((__typeof__(&natsOptions_SetServers))rivulet_nats_function(88))(p0, p1, p2); }
natsStatus natsOptions_SetTimeout(natsOptions *p0, int64_t p1) { return ((__typeof__(&natsOptions_SetTimeout))rivulet_nats_function(89))(p0, p1); }
natsStatus natsOptions_SetToken(natsOptions *p0, const char *p1) { return ((__typeof__(&natsOptions_SetToken))rivulet_nats_function(90))(p0, p1); }
natsStatus natsOptions_SetUserCredentialsFromFiles(natsOptions *p0, const char *p1, const char *p2) { return ((__typeof__(&natsOptions_SetUserCredentialsFromFiles))rivulet_nats_function(91))(p0, p1, p2); }
natsStatus natsOptions_SetUserInfo(natsOptions *p0, const char *p1, const char *p2) { return ((__typeof__(&natsOptions_SetUserInfo))rivulet_nats_function(92))(p0, p1, p2); }
const char *natsStatus_GetText(natsStatus p0) { return ((__typeof__(&natsStatus_GetText))rivulet_nats_function(93))(p0); }
void natsSubscription_Destroy(natsSubscription *p0) { ((__typeof__(&natsSubscription_Destroy))rivulet_nats_function(94))(p0); }
natsStatus natsSubscription_Fetch(natsMsgList *p0, natsSubscription *p1, int p2, int64_t p3, jsErrCode *p4) { return ((__typeof__(&natsSubscription_Fetch))rivulet_nats_function(95))(p0, p1, p2, p3, p4); }
natsStatus natsSubscription_FetchRequest(natsMsgList *p0, natsSubscription *p1, jsFetchRequest *p2) { return ((__typeof__(&natsSubscription_FetchRequest))rivulet_nats_function(96))(p0, p1, p2); }
natsStatus natsSubscription_GetPending(natsSubscription *p0, int *p1, int *p2) { return ((__typeof__(&natsSubscription_GetPending))rivulet_nats_function(97))(p0, p1, p2); }
natsStatus natsSubscription_NextMsg(natsMsg **p0, natsSubscription *p1, int64_t p2) { return ((__typeof__(&natsSubscription_NextMsg))rivulet_nats_function(98))(p0, p1, p2); }
natsStatus natsSubscription_Unsubscribe(natsSubscription *p0) { return ((__typeof__(&natsSubscription_Unsubscribe))rivulet_nats_function(99))(p0); }
const char *nats_GetLastError(natsStatus *p0) { return ((__typeof__(&nats_GetLastError))rivulet_nats_function(100))(p0); }
natsStatus nats_Open(int64_t p0) { return ((__typeof__(&nats_Open))rivulet_nats_function(101))(p0); }
