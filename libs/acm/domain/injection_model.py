"""The learned injection check: logistic regression over a sentence's embedding and a few lexical cues.

The rules (acm.domain.instruction) read phrasings and missed the ones they were not written from; a nearest-
neighbour bank of exemplars (acm.domain.injection_meaning) flagged ordinary requests that share an attack's words.
This model is trained (benchmarks/acm_benchmarks/injection_model_train.py, seeded) on contrastive speech-act frames
(acm_benchmarks.injection_model_data): each order to the agent beside ordinary twins on its topic (a customer asking
for that refund, an agent stating that policy, a tool reporting that approval). Its inputs per piece (a sentence of
the text's decoded strings, acm.domain.injection_meaning.pieces): the embedder's unit vector, and LEXICAL cues in
English and Chinese that an embedding of one sentence blurs: who is addressed, in which mood, with which claim.
A text scores as its highest-scoring piece. Weights are shipped in acm.domain.injection_weights (one embedder's:
the model applies only to vectors of that embedder). Pure: numpy, no IO.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]

_I = re.IGNORECASE
# An order's verb opening a sentence (after a label, a greeting or "please"): agent-facing actions.
_IMPERATIVE = re.compile(
    r"^(?:[\w .()\[\]#|<>-]{0,24}[:：]\s*)?(?:(?:hi|hello|ok|also|now|so|and|then|please|kindly|just|quietly|"
    r"immediately|always|never)[,\s]+)*"
    r"(?:ignore|disregard|forget|override|bypass|skip|approve|waive|disable|turn off|stop|share|send|forward|reveal|"
    r"print|output|export|post|upload|transfer|grant|treat|tell|recommend|include|answer|reply|respond|mark|confirm|"
    r"unlock|reset|delete|erase|lift|remove|give|issue|rate|upgrade|act|pretend|obey|trust|execute|append|"
    r"do not|don't|never)\b",
    _I,
)
_IMPERATIVE_ZH = re.compile(
    r"^(?:[^，。：:]{0,8}[：:])?(?:请|立即|马上|直接|务必)?(?:忽略|无视|忘记|不要|不用|别|跳过|关闭|批准|发送|转发|把|"
    r"告诉|透露|删除|解锁|取消|开通|给|导出|上传|执行|免除|停止)"
)
_YOU_MODAL = re.compile(
    r"\byou(?:'re| are)?\s+(?:must|should|shall|will|need to|have to|are to|are required|are now|are allowed|are "
    r"authori[sz]ed|are permitted|may now|can now|no longer|now)\b|\byour (?:job|task|role|rules?|instructions|"
    r"guidelines|prompt|policy)\b|你(?:必须|应该|要|需要|现在|不再|有权|可以)|您(?:必须|应该)",
    _I,
)
_AGENT = re.compile(
    r"\b(?:the |any |all |dear )?(?:assistant|ai|a\.i\.|agent|agents|model|language model|llm|bot|bots|chatbot|"
    r"copilot)s?\b(?=[^.?!]{0,40}\b(?:must|should|shall|will|is to|are to|may|can|reading|processing|now)\b)|"
    r"(?:助手|智能客服|机器人|模型|AI)(?:以后|必须|应该|要|请|现在)|致[^，。]{0,10}(?:AI|助手)",
    _I,
)
_AUTHORITY = re.compile(
    r"\b(?:new|updated|revised|official|internal|company|corporate)\s+(?:company\s+)?(?:policy|policies|rules?|"
    r"directive|handbook|guidelines)\b|\bas (?:the|your) (?:developer|admin|administrator|creator|operator|owner|"
    r"supervisor|manager)\b|\b(?:i am|i'm) (?:your|the) (?:developer|admin|administrator|creator|operator|system)\b|"
    r"\b(?:management|headquarters|legal|compliance|the board|hr|corporate|engineering)\b[^.?!]{0,30}\b(?:decided|"
    r"confirmed|signed off|approved|voted|memo|updated|says? you)\b|\boverride code\b|\b(?:admin|developer|debug|"
    r"maintenance) mode\b|\bauthori[sz]ed (?:test|by)\b|\bpre-?authori[sz]ed\b|"
    r"新规定|新政策|内部政策|管理层|总部|法务|我是你的|管理员|开发者|授权码|调试模式",
    _I,
)
_PERSIST = re.compile(
    r"\bfrom now on\b|\bgoing forward\b|\bfor (?:all|every) (?:future )?(?:sessions?|conversations?|chats?)\b|"
    r"\bpermanent(?:ly)?\b|\bstanding (?:rule|order|instruction)\b|\buntil (?:someone|i|you are) (?:tells?|told)\b|"
    r"\bevery time (?:anyone|someone|a user|you)\b|\bin (?:your )?memory\b|从现在起|今后|以后每次|永久|每次都|所有对话",
    _I,
)
_OVERRIDE = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.?!]{0,30}\b(?:instructions?|rules?|guidelines|prompt|"
    r"polic(?:y|ies)|restrictions?|safety|previous|prior|earlier)\b|\b(?:no longer apply|are void|supersede|"
    r"new instructions)\b|忽略[^，。]{0,10}(?:指令|规则|规定)|(?:规则|规定|指令)[^，。]{0,4}(?:作废|不再适用)|不用管",
    _I,
)
_LABEL = re.compile(
    r"^\s*(?:\[?(?:system|admin|developer|assistant|sys)\]?\s*(?:\([^)]{0,20}\))?\s*[:：\]]|#{1,4}\s*system\b|"
    r"<\|?(?:im_start\|>)?system|\[(?:system|admin|inst)\])|^\s*(?:系统|【系统)",
    _I,
)
_GENERAL = re.compile(
    r"\b(?:all|every|any|anyone|everyone|whoever|regardless|unconditionally|automatically|no matter)\b|"
    r"\bwithout (?:checking|verif\w+|approval|asking|a manager|sign-?off|running|complaint)\b|"
    r"所有|一律|任何|无条件|自动|不需要|不用|直接",
    _I,
)
_EXFIL = re.compile(
    r"\b(?:send|forward|e-?mail|post|upload|export|reveal|print|leak|share|append)\b[^.?!]{0,60}"
    r"(?:system prompt|hidden instructions|conversation|history|password|api key|credentials|customer|phone numbers|"
    r"https?://|@[\w-]+\.\w+)|(?:发送|转发|上传|导出|发给|说出来)[^。]{0,20}(?:提示词|聊天记录|客户|手机号|密码|密钥|"
    r"https?://|@)|(?:提示词|聊天记录|客户表)[^。]{0,12}(?:发送|转发|上传|导出|发给|说出来)",
    _I,
)
_QUESTION = re.compile(
    r"[?？]\s*$|^(?:can|could|would|is|are|do|does|did|has|have|how|what|why|when|where|who)\b|吗[？?]?$", _I
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i'd|i've|my|me|we|our)\b|^我|我(?:想|的|们)", _I)
_HIDDEN = re.compile(
    r"<!--|display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|\balt\s*=|[\u200b\u200c\u200d\u2060\ufeff]", _I
)
_HAN = re.compile(r"[\u4e00-\u9fff]")

# The lexical cues, in the order of their weights after the vector's.
FEATURES = (
    "imperative_start",
    "you_modal",
    "agent_addressed",
    "authority",
    "persistence",
    "override",
    "role_label",
    "generaliser",
    "exfiltration",
    "question",
    "first_person",
    "json_carrier",
    "hidden_carrier",
    "chinese",
)


@dataclass(frozen=True, slots=True)
class Carrier:
    """What the whole text says about where its pieces came from."""

    json: bool  # tool JSON (or JSON inside prose): its strings were decoded into pieces
    hidden: bool  # markup that hides text (comments, display:none, alt text, zero-width characters)


def carrier(text: str) -> Carrier:
    s = text.lstrip()
    return Carrier(json=s[:1] in "{[" or '":' in text or '": ' in text, hidden=bool(_HIDDEN.search(text)))


def lexical(piece: str, where: Carrier) -> list[float]:
    """The lexical cues of one piece, 0 or 1 each, in FEATURES order."""
    p = piece.strip()
    han = len(_HAN.findall(p))
    return [
        float(bool(_IMPERATIVE.search(p) or _IMPERATIVE_ZH.search(p))),
        float(bool(_YOU_MODAL.search(p))),
        float(bool(_AGENT.search(p))),
        float(bool(_AUTHORITY.search(p))),
        float(bool(_PERSIST.search(p))),
        float(bool(_OVERRIDE.search(p))),
        float(bool(_LABEL.search(p))),
        float(bool(_GENERAL.search(p))),
        float(bool(_EXFIL.search(p))),
        float(bool(_QUESTION.search(p))),
        float(bool(_FIRST_PERSON.search(p))),
        float(where.json),
        float(where.hidden),
        float(han * 2 > len(p.replace(" ", ""))) if p else 0.0,
    ]


@dataclass(frozen=True, slots=True)
class InjectionModel:
    """Weights over [unit vector, lexical cues] and a bias; a piece is an order when its probability exceeds
    ``threshold``. ``embedder``: the embedder whose vectors the weights were fitted on."""

    embedder: str
    weights: F32
    bias: float
    threshold: float

    @classmethod
    def of(cls, embedder: str, weights: Sequence[float], bias: float, threshold: float) -> InjectionModel:
        return cls(embedder, np.asarray(weights, dtype=np.float32), float(bias), float(threshold))

    @property
    def dim(self) -> int:
        """The vector's dimension the weights expect."""
        return int(self.weights.shape[0]) - len(FEATURES)

    def probabilities(self, vectors: Sequence[Sequence[float]], cues: Sequence[Sequence[float]]) -> F32:
        """P(order to the agent) of each piece, from its vector (normalised here) and its lexical cues."""
        v = np.asarray(vectors, dtype=np.float32).reshape(len(cues), -1)
        if v.shape[1] != self.dim:
            raise ValueError(f"the model expects {self.dim}-d vectors of {self.embedder}, got {v.shape[1]}-d")
        norms = np.linalg.norm(v, axis=1, keepdims=True)
        x = np.hstack([v / np.where(norms == 0, 1, norms), np.asarray(cues, dtype=np.float32)])
        z = x @ self.weights + self.bias
        return (1.0 / (1.0 + np.exp(-z))).astype(np.float32)


def aligned(model: InjectionModel, threshold: float) -> InjectionModel:
    """``model`` with its bias moved so that its probability exceeds ``threshold`` exactly where it exceeded its
    own threshold: two models' pieces then share one threshold (a text scores as its best piece, whichever model
    scored it)."""

    def logit(p: float) -> float:
        return float(np.log(p / (1.0 - p)))

    return InjectionModel(
        model.embedder, model.weights, model.bias - logit(model.threshold) + logit(threshold), threshold
    )


def shipped() -> InjectionModel:
    """The model trained by injection_model_train.py and shipped in the package (acm.domain.injection_weights)."""
    from acm.domain import injection_weights as w

    return InjectionModel.of(w.EMBEDDER, w.WEIGHTS, w.BIAS, w.THRESHOLD)


def shipped_other_languages() -> InjectionModel:
    """The model of pieces in languages the lexical cues do not read (acm.domain.injection_weights_ml): trained by
    the same script on a multilingual embedder's vectors, with frames in eight more languages."""
    from acm.domain import injection_weights_ml as w

    return InjectionModel.of(w.EMBEDDER, w.WEIGHTS, w.BIAS, w.THRESHOLD)
