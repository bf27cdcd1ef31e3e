"""English word lists for the blameless-language check (see the package docstring).

The lists aim at wording that puts a person where a system condition belongs. They leave
out words that are as often neutral or praise ("introduced by", "because of", "thanks to")
because a warning that fires on "thanks to dave's quick restart" teaches people to ignore
the warnings; the possessive shape still catches "because of dave's mistake".
"""

from django.utils.translation import gettext_lazy

from postmortems.blameless.languages import Language, Rule

# Straight and typographic apostrophes: text pasted from chat or documents uses both.
A = "['\u2019]"
# "a bad config", "an untested change": the object of a careless push, noun included so the
# flagged span reads as a phrase.
_BAD_THING = r"(?:bad|broken|wrong|faulty|buggy|untested|incorrect|invalid)\s+[\w-]+"

RULES = (
    Rule(
        id="human-error",
        patterns=(r"(?:human|operator|pilot|user)[\s-]+(?:error|mistake|failure)s?",),
        message=gettext_lazy(
            '"Human error" ends the investigation at a person instead of explaining '
            "why the system let the mistake through."
        ),
        suggestion=gettext_lazy(
            "Describe the condition that let the mistake through: which check, "
            "guardrail or review was missing?"
        ),
    ),
    Rule(
        id="careless",
        patterns=(r"careless(?:ly|ness)?",),
        message=gettext_lazy(
            '"Careless" judges a person\'s character rather than describing what happened.'
        ),
        suggestion=gettext_lazy(
            "Describe what made the step easy to get wrong (unclear output, no "
            "confirmation, no dry run) and how the tooling could make it hard."
        ),
    ),
    Rule(
        id="should-have-known",
        patterns=(
            rf"should(?:\s+have|{A}ve)\s+(?:known|checked|noticed|caught|seen|realised|realized"
            r"|tested|verified|asked|been\s+more\s+careful)",
        ),
        message=gettext_lazy(
            "Hindsight: what is obvious now was not obvious with the information and "
            "signals available at the time."
        ),
        suggestion=gettext_lazy(
            "Describe what the responder could see at the time and which signal, "
            "alert or check would have made the problem visible."
        ),
    ),
    Rule(
        id="should-not-have",
        patterns=(rf"should(?:\s+not|n{A}t)(?:\s+have|{A}ve)",),
        message=gettext_lazy(
            "Counterfactual wording points at a person's choice instead of at the "
            "conditions that made that choice reasonable."
        ),
        suggestion=gettext_lazy(
            "Explain why the action made sense at the time, then name the guardrail "
            "(validation, approval, rate limit) that should stop it next time."
        ),
    ),
    Rule(
        id="forgot",
        patterns=(r"forgot(?:ten)?", r"forgetting"),
        message=gettext_lazy('"Forgot" makes a person\'s memory the safeguard.'),
        suggestion=gettext_lazy(
            "Name the step that relied on memory and how to make it automatic: a "
            "checklist item, a pipeline step or an alert."
        ),
    ),
    Rule(
        id="negligent",
        patterns=(r"neglig(?:ent|ently|ence)", r"neglect(?:ed|ing)?"),
        message=gettext_lazy(
            '"Negligent" is a judgement about a person, not a description of the system.'
        ),
        suggestion=gettext_lazy(
            "Describe which duty depended on one person and how the process could "
            "share or automate it."
        ),
    ),
    Rule(
        id="sloppy",
        patterns=(r"slopp(?:y|ily|iness)",),
        message=gettext_lazy(
            '"Sloppy" judges the quality of someone\'s work without saying what failed.'
        ),
        suggestion=gettext_lazy(
            "Describe the specific defect and which review or test would catch it."
        ),
    ),
    Rule(
        id="incompetent",
        patterns=(r"incompeten(?:t|tly|ce)",),
        message=gettext_lazy(
            '"Incompetent" attacks a person and explains nothing about the failure.'
        ),
        suggestion=gettext_lazy(
            "Describe the knowledge or tooling gap (docs, training, runbook, safer "
            "defaults) that made the task hard to do right."
        ),
    ),
    Rule(
        id="didnt-bother",
        patterns=(
            rf"did(?:n{A}t|\s+not)\s+(?:even\s+)?bother",
            rf"could(?:n{A}t|\s+not)\s+be\s+bothered",
        ),
        message=gettext_lazy(
            '"Didn\'t bother" assigns motive; people skip steps that look optional or costly.'
        ),
        suggestion=gettext_lazy(
            "Describe why the step looked skippable and how to make it cheap or "
            "enforced (automation, a required check)."
        ),
    ),
    Rule(
        id="fault",
        patterns=(r"fault\s+of", rf"[\w-]+{A}s\s+fault", r"at\s+fault"),
        message=gettext_lazy("Assigning fault names a culprit instead of a cause."),
        suggestion=gettext_lazy(
            "Describe the chain of conditions that led to the failure and which link "
            "is cheapest to break."
        ),
    ),
    Rule(
        id="blame",
        patterns=(r"blam(?:e|es|ed|ing)",),
        message=gettext_lazy(
            "Talking about blame keeps the focus on who, not on how the system failed."
        ),
        suggestion=gettext_lazy(
            "Describe what happened and why it made sense at the time; leave out who is to blame."
        ),
    ),
    Rule(
        id="stupid-mistake",
        patterns=(r"(?:stupid|dumb|silly|idiotic|rookie|obvious)\s+(?:mistake|error)s?",),
        message=gettext_lazy("Calling a mistake stupid or obvious judges the person who made it."),
        suggestion=gettext_lazy(
            "Describe the mistake plainly and what would have caught it before "
            "production (a test, a lint, a staging step)."
        ),
    ),
    Rule(
        id="not-paying-attention",
        patterns=(
            rf"(?:not|n{A}t)\s+paying\s+attention",
            rf"did(?:n{A}t|\s+not)\s+pay\s+attention",
        ),
        message=gettext_lazy(
            "Attention is not a control; a process that needs constant attention will fail."
        ),
        suggestion=gettext_lazy(
            "Describe which signal was easy to miss and how to make it louder or "
            "unnecessary (an alert, a blocking check, better defaults)."
        ),
    ),
)

LANGUAGE = Language(
    code="en",
    rules=RULES,
    failure_verbs=(
        r"broke|broken|breaks",
        r"forgot|forgotten|forgets",
        r"missed|overlooked|ignored|neglected",
        r"caused",
        r"messed\s+up|screwed\s+up|botched|fat[\s-]?fingered|misconfigured|mistyped",
        r"failed\s+to",
        rf"did(?:n{A}t|\s+not)\s+(?:check|test|verify|notice|review|read|follow|see|catch"
        r"|wait|ask|think)",
        r"made\s+(?:a|an|the)\s+(?:[\w-]+\s+)?(?:mistake|error|blunder)",
        r"(?:pushed|deployed|shipped|merged|applied|committed|rolled\s+out|ran)\s+"
        rf"(?:a|an|the|some)\s+{_BAD_THING}",
        r"[\w-]+ed\s+the\s+wrong\s+[\w-]+",
        r"took\s+down|brought\s+down|knocked\s+over",
    ),
    fillers=(r"had|has|have|was|then|also|just|again|later|somehow",),
    adverbs=(r"accidentally|mistakenly|carelessly|wrongly|inadvertently|recklessly",),
    by_patterns=(
        r"caused\s+by",
        r"broken\s+by",
        r"blamed\s+on",
        r"fault\s+of",
        r"(?:mistake|error|oversight|negligence|screw[\s-]?up|blunder)s?\s+(?:by|of)",
    ),
    possessive=A + "s",
    blame_nouns=(
        r"mistake|error|fault|blunder|oversight|negligence|carelessness|screw[\s-]?up|typo",
        _BAD_THING,
    ),
    person_rule=Rule(
        id="person-as-cause",
        patterns=(),
        message=gettext_lazy(
            "Names a person as the cause of the failure; the same slip could have come "
            "from anyone on the rota."
        ),
        suggestion=gettext_lazy(
            "Make the system the subject: describe the action, what the tooling "
            "allowed, and which check, guardrail or review would have caught it."
        ),
    ),
)
