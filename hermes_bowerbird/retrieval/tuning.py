"""Retrieval's fixed tuning constants, each with the reason for its value (the fitted weights live in config).

A value marked "bound" limits work or memory and was not fitted; one marked "measured" was chosen with
benchmarks/bench_recall.py as its comment says; the others are design choices whose comment gives the reason.
"""

from __future__ import annotations

# -- candidates (retrieval/candidates.py) ---------------------------------------------------------------------------
FTS_LIMIT = 30  # per full-text signal; measured: LoCoMo dev ranks alike with 30 and 50, and 30 hydrates less
FTS_PREFIX_MIN = 0  # 0 = whole words only; measured: porter stemming already folds most inflections
VECTOR_LIMIT = 50  # per vector signal; bound
# stored questions read per search (several per memory, so VECTOR_LIMIT memories' worth); bound
QUESTION_LIMIT = 150
GRAPH_LIMIT = 50  # per entity, subject or edge signal; bound, as VECTOR_LIMIT
# entity links read per candidate kept (x GRAPH_LIMIT): an item mentions a few named entities
GRAPH_LINK_ROWS = 4
EDGE_HOPS = 2  # typed edges are followed this far from the best memories (an update of an update)
# a memory two edges away counts for half: it is about something nearby, not the thing
SECOND_HOP_DAMPING = 0.5
# the best memories whose typed edges are followed; bound: one store query per search
EDGE_SEEDS = 5

# items a search sees from which the query embedding and vector search run beside the keyword queries; measured on 2
# cores, fresh LongMemEval questions through the provider, interleaved, p50 beside against one after the other: a
# gateway user seeing 1,000 memories of a SQLite store 10.7 ms against 11.6; 2,000: 12.1 against 12.2 (p95 17.7
# against 20.5); 4,000: 17.5 against 20.2, and on PostgreSQL 33.7 against 37.5
PARALLEL_FROM_ITEMS = 2_000
# items of a kind a search sees from which a server store ranks the keyword matches of each scope side by side (the
# first scope on a second connection); measured through the provider on PostgreSQL, p50: a user seeing 4,000
# memories 20.5 ms against 17.1-17.9 one query; 40,000: 28.3 against 27.5; 400,000: 51.7 against 70.2
KEYWORDS_BY_SCOPE_FROM_ITEMS = 100_000

# -- ranking (retrieval/retriever.py, retrieval/fusion.py) ----------------------------------------------------------
MAX_LIMIT = 100  # bound: the most hits one search returns, whatever the caller asks
# bound: the best fused candidates the rerank re-weighs (at least; MMR's pool when larger)
RERANK_POOL = 60
# the share of the prefetch time (config prefetch_timeout_seconds, from the search's start) the cross-encoder must be
# done within, leaving the rest for the steps after it and the hand-off to the host
RERANK_TIME_SHARE = 0.7
RELEVANCE_POOL = 100  # candidates checked against a relevance floor (prefetch): the gate sees past the rerank pool
# the best-ranked candidates read for what amends a memory that passed the gate (a switch of one drug of two, news of
# someone it names): an amendment ranked below them is not carried; reading all of the relevance pool cost ~1 ms a
# prefetch at 10,000 items
AMENDMENT_POOL = 20
# MMR chooses among this many x limit best candidates, so diversity cannot reach far down
MMR_POOL_FACTOR = 3
MIN_MMR_POOL = 20  # ... and among at least this many, so a small limit still has alternatives
# a matched stale memory brings successors this many versions on (longer chains are rare)
SUCCESSOR_HOPS = 3
# a superseded memory scores at most this share of its successor: always just below it
SUCCESSOR_MARGIN = 0.99
# "recently" favours items of the last month; each 30 days halves the bonus
RECENCY_HALF_LIFE_DAYS = 30.0
SESSION_TOP = 2  # a session's strength is the sum of its best two episode scores (one lucky turn is not a session)
EVIDENCE_TOP = 3  # keyword evidence is the best coverage among each full-text signal's first three visible items
DUPLICATE_OFF = 1.01  # MMR's duplicate threshold when none is given: above any similarity, so nothing is dropped

# -- keyword coverage (retrieval/fusion.py, retrieval/rerank.py) ----------------------------------------------------
# words sharing their first five letters count as one in keyword coverage (painted/painting)
STEM_CHARS = 5
# a long query's first keywords count for coverage; bound, as many as full-text search uses
COVERAGE_WORDS = 32
# cached document frequencies are dropped once the corpus grew by this share
IDF_REFRESH_GROWTH = 0.1

# -- prefetch gate (retrieval/gate.py) ------------------------------------------------------------------------------
# stored vectors the query is compared with to learn its typical similarity to this store
SAMPLE_SIZE = 256
SAMPLE_REFRESH_GROWTH = 0.1  # a cached sample is redrawn once its scopes grew by this share
MIN_STD = 0.03  # a floor for the spread, so a near-constant sample cannot inflate z-scores
# A small store says little about a query's typical similarity: its sample is pooled with PRIOR_WEIGHT pseudo-items
# of a typical MiniLM similarity between unrelated texts (PRIOR_MEAN, spread PRIOR_STD), which a big sample
# outweighs.
PRIOR_WEIGHT = 16.0
PRIOR_MEAN = 0.1
PRIOR_STD = 0.08
# below this many items the bar stays where 50 would put it: a tiny sample proves little
MIN_CHANCE_SIZE = 50

# -- importance (retrieval/scoring.py) ------------------------------------------------------------------------------
# frequent recall at most doubles a memory's weight, so use cannot bury what is new
MAX_ACCESS_BOOST = 2.0
