"""Every seam: the protocols the core and the adapters talk through, and the value types
they exchange. Storage, models and adapters implement them.

A leaf: nothing here imports a module of `docassist` that imports this one back.
Optional abilities are declared as flags (`Answerer.can_stream`), never probed.
Callers import from here (`from docassist.core.ports import X`); the modules group them:
    search    the catalog, the indexer's view of it, retrievers, embedders
    stores    conversations, traces, feedback: what a turn and its readers speak to
    models    selector requests, selector, answerer, a model server's chat client
    inbox     the durable inbox, its events and claims, rate counting
    adapters  what adapters read and write themselves (AdapterStore), scopes, membership
    observer  what operators watch (metrics)
"""

from docassist.core.ports.adapters import (
    AdapterStore,
    MembershipLookup,
    NoGroups,
    PostedReplies,
    ScopeAdmin,
    ScopeRules,
    Shares,
    SourceLog,
    StaleNotes,
    TeamAddresses,
)
from docassist.core.ports.inbox import (
    Hold,
    Inbox,
    InboxBacklog,
    InboxEvent,
    InboxGauge,
    RateCheck,
    RateCounter,
)
from docassist.core.ports.models import (
    Answerer,
    ChatModel,
    ExampleSource,
    FollowUp,
    LabelledExample,
    Message,
    ModelBacklog,
    Reading,
    SelectionRequest,
    SelectorModel,
    StateSummary,
)
from docassist.core.ports.observer import (
    NULL_OBSERVER,
    NullObserver,
    Observer,
)
from docassist.core.ports.search import (
    Catalog,
    DocumentIndex,
    Embedder,
    PassageReader,
    Retriever,
    SearchHit,
)
from docassist.core.ports.stores import (
    ConversationLookup,
    ConversationStore,
    FeedbackLog,
    GapLog,
    QuestionLog,
    QuestionTrace,
    SeenEvents,
    ShadowLog,
    StoredConversation,
    TraceLog,
    TurnStore,
)

__all__ = [
    "NULL_OBSERVER",
    "AdapterStore",
    "Answerer",
    "Catalog",
    "ChatModel",
    "ConversationLookup",
    "ConversationStore",
    "DocumentIndex",
    "Embedder",
    "ExampleSource",
    "FeedbackLog",
    "FollowUp",
    "GapLog",
    "Hold",
    "Inbox",
    "InboxBacklog",
    "InboxEvent",
    "InboxGauge",
    "LabelledExample",
    "MembershipLookup",
    "Message",
    "ModelBacklog",
    "NoGroups",
    "NullObserver",
    "Observer",
    "PassageReader",
    "PostedReplies",
    "QuestionLog",
    "QuestionTrace",
    "RateCheck",
    "RateCounter",
    "Reading",
    "Retriever",
    "ScopeAdmin",
    "ScopeRules",
    "SearchHit",
    "SeenEvents",
    "SelectionRequest",
    "SelectorModel",
    "ShadowLog",
    "Shares",
    "SourceLog",
    "StaleNotes",
    "StateSummary",
    "StoredConversation",
    "TeamAddresses",
    "TraceLog",
    "TurnStore",
]
