"""Simplified Chinese word lists for the blameless-language check (see the package docstring).

The phrasing a Chinese postmortem slips into when it looks for a culprit: 某某的错, 人为失误,
粗心, 背锅, 本该早就发现 ... Chinese has no spaces, so nothing here relies on word
boundaries (the engine knows from `spaced=False`); patterns are kept specific instead, e.g.
"的错" but not "的错误" (配置的错误 describes the config), and 本该 only before a verb of
noticing or checking (告警本该在 02:10 触发 is about the alert, not a person).

Where a rule means what an English rule means it shares its id, message and suggestion:
a viewer sees the same advice for "human error" and 人为失误, in their own language.
"""

from django.utils.translation import gettext_lazy

from postmortems.blameless.languages import Language, Rule
from postmortems.blameless.languages.en import LANGUAGE as ENGLISH

_EN = {rule.id: rule for rule in ENGLISH.rules}
# A run of text inside one clause: no spaces and no punctuation.
_CLAUSE = r"[^\s，。；：！？、,.;:!?]"


def _like_english(rule_id: str, *patterns: str) -> Rule:
    """A rule with the English rule's id, message and suggestion, and Chinese patterns."""
    english = _EN[rule_id]
    return Rule(
        id=rule_id, patterns=patterns, message=english.message, suggestion=english.suggestion
    )


RULES = (
    _like_english(
        "human-error",
        r"人为(?:失误|错误|因素|原因)",
        r"操作(?:失误|不当)",
        r"误操作",
        r"手误",
        r"人祸",
    ),
    _like_english(
        "careless",
        r"粗心(?:大意)?",
        r"马马虎虎|马虎",
        r"粗枝大叶",
        r"不够(?:细心|仔细)",
    ),
    _like_english(
        "should-have-known",
        r"(?:本该|本应该?|早该|早就(?:应该?|该)|应该早就|理应|本来(?:就)?应该)"
        r"(?:要|先|提前|及时|早就|早点)?"
        r"(?:知道|发现|注意到|察觉|意识到|想到|看到|检查|核对|确认|测试|验证"
        r"|更(?:加)?(?:小心|仔细))",
    ),
    _like_english(
        "should-not-have",
        r"本(?:来)?(?:就)?不(?:该|应该?)",
        r"当时(?:就)?不(?:该|应该?)",
        r"根本(?:就)?不(?:该|应该?)",
    ),
    _like_english("forgot", r"忘了|忘记了?|遗忘了?"),
    _like_english("negligent", r"疏忽(?:大意)?|疏于|玩忽职守|失职|渎职"),
    _like_english("sloppy", r"草率|敷衍(?:了事)?|乱改|瞎改|瞎搞|乱搞"),
    _like_english(
        "incompetent",
        r"能力(?:不足|不行|太差)",
        r"不称职|不专业",
        r"水平(?:太|很)?(?:差|不行)",
        r"太菜",
    ),
    _like_english("didnt-bother", r"懒得|嫌麻烦|图省事|偷懒"),
    _like_english(
        "fault",
        # 是值班的错 / 都是 alice 的锅, but not 配置的错误.
        rf"(?:是|都是|全是|就是|谁的){_CLAUSE}{{0,10}}?的(?:错|过错|锅)(?!误)",
        r"过错",
    ),
    _like_english("blame", r"背(?:黑)?锅|甩锅|扣锅|怪罪|归咎"),
    _like_english(
        "stupid-mistake",
        r"低级(?:错误|失误)",
        r"(?:愚蠢|可笑|弱智)的?(?:错误|失误|操作)",
        r"犯傻|脑子进水",
    ),
    _like_english(
        "not-paying-attention",
        r"没(?:有)?(?:注意|留意)(?:到)?",
        r"不注意|注意力不集中|走神",
        r"(?:没|不)上心",
    ),
    Rule(
        id="responsible-person",
        patterns=(
            r"责任人(?:是|为)",
            r"责任在(?:于)?",
            rf"追究{_CLAUSE}{{0,8}}?责任",
            r"追责|问责",
        ),
        message=gettext_lazy(
            "Naming who is responsible turns the review into a search for a culprit, and "
            "next time people say less about what really happened."
        ),
        suggestion=gettext_lazy(
            "Give each follow-up an owner as an action item instead, and describe which "
            "safeguard was missing."
        ),
    ),
)

# 忘了, 搞错了 ...: the optional 了 is part of the phrase so the flagged span reads whole.
_VERBS = (
    r"忘了|忘记了?|漏了|漏掉了?",
    r"(?:搞|弄|写|改|配|填|删|看)错了?",
    r"误(?:删|改|操作)了?",
    r"(?:搞|弄|改)(?:挂|坏|砸|崩)了?",
    r"没(?:有)?(?:检查|测试|验证|确认|核对|注意|看|通知|评审|等)",
    r"导致了?|造成了?|引起了?",
    r"犯了(?:个|一个)?\w{0,4}?(?:错误|失误|错)",
)

LANGUAGE = Language(
    code="zh_hans",
    rules=RULES,
    failure_verbs=_VERBS,
    # 张三又忘了, 张三当时直接改错了.
    fillers=(r"又|也|还|就|已经|直接|居然|竟然|当时|再次",),
    # 张三不小心 ...: the adverb already makes the person the cause.
    adverbs=(r"不小心|粗心地?|擅自|贸然|草率地?|手滑",),
    by_patterns=(r"都怪|全怪|只怪|要怪|归咎于|责任在(?:于)?|锅在",),
    possessive="的",
    blame_nouns=(r"错(?!误)|错误|锅|失误|疏忽|过失|过错|责任",),
    person_rule=ENGLISH.person_rule,
    spaced=False,
    script=r"[\u3400-\u4dbf\u4e00-\u9fff]",
)
