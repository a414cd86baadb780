"""The core of DocAssist: platform-neutral, no SQL, no HTTP. The modules in pipeline order.

Seams
    ports        every protocol the core and the adapters talk through (a leaf package:
                 search, stores, models, inbox, adapters, observer; all re-exported)
    statuses     every status, kind and language code, defined once (a leaf module)
    errors       the exceptions
    limits       the core's numeric limits, named once (each room keeps its own)
    i18n         every user-facing sentence, in Polish and English (a package: one table
                 per area, merged; language detection)

Arrival (the machinery that stores, acks and hands events to turns lives in
docassist.serving: admission, ratelimit, inbox, delivery, ack_writes)
    messages     the platform-neutral chat message, its conversation key, validation
    holder       this process's name on the claims and leases it takes
    batching     work concurrent callers share in batches (group commit, query
                 embeddings), and side effects done once per committed batch

The turn
    turn         one turn top to bottom: begin, early reply, plan, execute once, reply, commit
    turn_context what one turn has learnt so far, handed from step to step
    early_replies  replies and plans that need no selector (clear, unreadable, commands)
    turn_result  the result adapters render and the state the thread keeps
    tracing      the trace rows a turn leaves (hashes unless raw saving is on)
    shadow       the shadow selector, asked after the commit on its own thread
    locks        one lock per conversation, kept only while in use
    state        what a thread remembers between turns
    planning     everything a turn decides before it acts
    followup     follow-up questions made standalone from the history
    subjects     what a conversation can be about (catalog services, object kinds)
    intents      the exact rules: document ids, paths, injections a pattern catches for sure
    selection    the selector prompt, strict parsing of its proposal, normalization
    message_features  what the learned selector sees of a message (embedding, n-grams, state)
    learned      the learned selector (no model): exact rules, a classifier, kind -> decision
    examples     a model selector's worked examples: the nearest labelled bank messages
    tools        the tool catalog and the guarded executor (at most one attempt per turn)
    retrieval    searching a question with its translations
    answering    retrieval, the answer and the citation check; a refusal's named pages
    asked_facts  the kind of fact a question asks (an amount, how often, how long, how
                 many of what), and whether a passage states one
    glossary     Polish words glossed into English (and back), word by word
    named_terms  the names a question holds (a product, a tool, a protocol), and whether a
                 page mentions them
    extractive   the `rules` answerer: the best page's passage, or a procedure's steps
    passages     a page's passage as replies show it (lists as lists, links as titles)
    procedure    the consecutive steps of a how-to document
    documents    documents and chunks: front matter, chunking, stable ids
    fences       what "inside a fenced code block" means, read one way by all of core
    text         terms, stems and sentences shared by search and answers
    replies      from plan and tool outcome to the status and words the user sees
    results      the result of a turn as adapters render it
    trace        the trace rows of a turn and of its tool attempt

After the answer (what users say of it)
    feedback     why a 👎: the fixed reasons, stored and exported
    sharing      a private answer shared in its channel: which answer, and whether it may

Documents changing under answers
    sources      document sources: kind, name, collection, settings; what a sync reports
    stale        answers whose cited document changed: the note offering to ask again

From gaps to better documents
    gaps         questions kept as vectors after the commit; gap turns grouped by meaning

Who may read what (issue 22)
    scopes       the audience of a reply and the scope (collections) it may be answered from
    scoping      audience → scope from the mappings; the catalog and retriever in a scope
    scope_commands  the `scopes` command shared by the CLI and the admin chat commands

Evaluation (offline) lives in `docassist.evaluation`, outside the core: nothing here imports it.
"""
