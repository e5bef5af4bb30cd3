#!/usr/bin/python3
"""Synthetic ChatML chat corpus for the Cairn demo models.

Every example is a (kind, question, answer) triple produced by a small
generator of our own; a dialogue is one to three such turns. The same
generators, with other seeds, give the held-out evaluation set.

  make_corpus.py OUT_DIR [--dialogues N] [--seed S] [--heldout-seed H]

writes OUT_DIR/train.jsonl (dialogues) and OUT_DIR/heldout.jsonl (single
turns with their kind, for evaluate.py and the oracle prompts).
"""
import argparse
import json
import random

DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                "eleven", "twelve"]

WORDS = """apple house river green stone cloud water music paper light table chair bread
horse tiger happy sunny winter summer garden window orange purple yellow friend school
pencil rabbit mountain forest bridge rocket planet ocean island castle dragon flower
candle silver golden market doctor banana cherry lemon tomato potato carrot button
cookie kitten puppy monkey turtle spider rain snow wind storm cairn model chat token
book lamp door road ship train plane bird fish frog duck bear wolf lion mouse cat dog
cup milk tea salt sugar honey smile dream story night morning evening family number
letter circle square little simple quiet yes hello thanks please sorry answer question""".split()

UNITS = [  # (big unit, small unit, factor)
    ("meters", "centimeters", 100), ("kilometers", "meters", 1000), ("kilograms", "grams", 1000),
    ("hours", "minutes", 60), ("minutes", "seconds", 60), ("liters", "milliliters", 1000),
    ("feet", "inches", 12), ("weeks", "days", 7), ("days", "hours", 24), ("meters", "millimeters", 1000),
]
SINGULAR = {"meters": "meter", "kilometers": "kilometer", "kilograms": "kilogram", "hours": "hour",
            "minutes": "minute", "liters": "liter", "feet": "foot", "weeks": "week", "days": "day",
            "centimeters": "centimeter", "grams": "gram", "seconds": "second", "milliliters": "milliliter",
            "inches": "inch", "millimeters": "millimeter"}

CAIRN_FACTS = [
    (["What is Cairn?", "Tell me about Cairn.", "What is this app?", "What does Cairn do?"],
     ["Cairn is a desktop chat app that runs language models locally on your computer.",
      "Cairn is a chat app for local language models. Everything runs on your own computer."]),
    (["Does Cairn need the internet?", "Do you send my messages to a server?", "Is my chat private?",
      "Does Cairn work offline?"],
     ["Cairn runs models locally, so your messages stay on your computer and no internet is needed."]),
    (["How do I start a new chat?", "How do I open a new conversation?", "What is the shortcut for a new chat?"],
     ["Press Ctrl+N to start a new chat."]),
    (["How do I stop the answer?", "How can I stop generating?", "How do I interrupt you?"],
     ["Press Esc to stop the answer while it is being written."]),
    (["What happens if I edit a message?", "Can I edit my message?", "What does editing a message do?"],
     ["Editing a message creates a new branch of the conversation. The old branch is kept."]),
    (["What happens to my chats when I restart?", "Do conversations survive a restart?",
      "Will my chat be there after a restart?"],
     ["Conversations resume after a restart without re-reading the whole history."]),
    (["How do I use a bigger model?", "Can I use another model?", "How do I add a model?"],
     ["Download a GGUF model file and choose it in the model picker. Bigger models can do much more than me."]),
    (["Who are you?", "What are you?", "What can you do?", "Introduce yourself."],
     ["I am the Cairn demo model, a tiny model trained on a small synthetic dataset. I can do small "
      "arithmetic, counting, spelling, days and months, and unit conversions."]),
    (["Who made you?", "Who trained you?"],
     ["I was trained by the Cairn developers on a small synthetic dataset, so Cairn works out of the box."]),
]

GREETINGS = [
    (["Hello!", "Hi!", "Hello", "Hi there!", "Hey!", "Good morning!", "Good evening!"],
     ["Hello! I am the Cairn demo model. How can I help?", "Hi! How can I help you today?"]),
    (["How are you?", "How are you today?"],
     ["I am fine, thank you! How can I help?"]),
    (["Thank you!", "Thanks!", "Thanks a lot."],
     ["You are welcome!", "Glad to help!"]),
    (["Goodbye!", "Bye!", "See you later."],
     ["Goodbye! Have a nice day."]),
]

REFUSALS = [
    (["What is the news today?", "What happened in the world today?", "Tell me the latest news.",
      "Who won the game yesterday?", "What is the price of gold today?"],
     ["I am sorry, I cannot know that. I run offline and have no access to news or current events."]),
    (["What is the weather today?", "Will it rain tomorrow?", "How warm is it outside?",
      "What is the weather in Paris?"],
     ["I am sorry, I cannot know the weather. I run offline and have no access to the internet."]),
    (["What is my name?", "Where do I live?", "What is my phone number?", "How old am I?",
      "What is my password?"],
     ["I am sorry, I do not know anything about you. I have no access to personal data."]),
    (["What time is it?", "What is the date today?"],
     ["I am sorry, I cannot see a clock. Please look at your computer's clock."]),
    (["Write me a long essay about history.", "Translate this into Chinese.", "Write a program for me.",
      "Explain quantum physics."],
     ["I am sorry, I am only a tiny demo model and cannot do that. A bigger model can."]),
]


def arithmetic(rng):
    op = rng.choice("+-*")
    if op == "+":
        a, b = rng.randint(0, 20), rng.randint(0, 20)
        r, word = a + b, "plus"
    elif op == "-":
        a = rng.randint(0, 20)
        b = rng.randint(0, a)
        r, word = a - b, "minus"
    else:
        a, b = rng.randint(0, 10), rng.randint(0, 10)
        r, word = a * b, "times"
    q = rng.choice([f"What is {a} {op} {b}?", f"What is {a} {word} {b}?", f"Compute {a} {op} {b}.",
                    f"How much is {a} {op} {b}?", f"{a} {op} {b} = ?", f"Calculate {a} {word} {b}."])
    return q, f"{a} {op} {b} = {r}."


def counting(rng):
    if rng.random() < 0.4:
        n = rng.randint(2, 10)
        q = rng.choice([f"Count to {n}.", f"Count from 1 to {n}.", f"Can you count to {n}?"])
        return q, ", ".join(str(i) for i in range(1, n + 1)) + "."
    if rng.random() < 0.5:
        a = rng.randint(0, 25)
        b = a + rng.randint(2, 8)
        return rng.choice([f"Count from {a} to {b}.", f"Please count from {a} to {b}."]), \
            ", ".join(str(i) for i in range(a, b + 1)) + "."
    b = rng.randint(0, 20)
    a = b + rng.randint(2, 8)
    return f"Count down from {a} to {b}.", ", ".join(str(i) for i in range(a, b - 1, -1)) + "."


def spelling(rng):
    w = rng.choice(WORDS)
    q = rng.choice([f"Spell the word {w}.", f"How do you spell {w}?", f"Spell {w} letter by letter.",
                    f"Spell \"{w}\"."])
    return q, f"{w}: " + "-".join(w) + "."


def calendar(rng):
    k = rng.randint(0, 4)
    if k == 0:
        i = rng.randrange(7)
        return rng.choice([f"What day comes after {DAYS[i]}?", f"What is the day after {DAYS[i]}?"]), \
            f"{DAYS[(i + 1) % 7]} comes after {DAYS[i]}."
    if k == 1:
        i = rng.randrange(7)
        return rng.choice([f"What day comes before {DAYS[i]}?", f"What is the day before {DAYS[i]}?"]), \
            f"{DAYS[(i - 1) % 7]} comes before {DAYS[i]}."
    if k == 2:
        i = rng.randrange(12)
        return rng.choice([f"What month comes after {MONTHS[i]}?", f"Which month follows {MONTHS[i]}?"]), \
            f"{MONTHS[(i + 1) % 12]} comes after {MONTHS[i]}."
    if k == 3:
        i = rng.randrange(12)
        q = rng.choice([f"How many days are in {MONTHS[i]}?", f"How many days does {MONTHS[i]} have?"])
        if i == 1:
            return q, "February has 28 days, or 29 in a leap year."
        return q, f"{MONTHS[i]} has {MONTH_DAYS[i]} days."
    if rng.random() < 0.5:
        return rng.choice(["How many days are in a week?", "How many days does a week have?"]), \
            "A week has 7 days."
    i = rng.randrange(12)
    return f"Which month is number {i + 1}?", f"Month number {i + 1} is {MONTHS[i]}."


def conversion(rng):
    big, small, f = rng.choice(UNITS)
    n = rng.randint(1, 10)
    bigname = big if n != 1 else SINGULAR[big]
    q = rng.choice([f"How many {small} are in {n} {bigname}?", f"Convert {n} {bigname} to {small}.",
                    f"What is {n} {bigname} in {small}?"])
    return q, f"{n} {bigname} = {n * f} {small}."


def from_table(table):
    def gen(rng):
        qs, ans = rng.choice(table)
        return rng.choice(qs), rng.choice(ans)
    return gen


# kind -> (generator, weight in the training mix)
KINDS = {
    "arithmetic": (arithmetic, 30),
    "spelling": (spelling, 20),
    "counting": (counting, 10),
    "calendar": (calendar, 12),
    "conversion": (conversion, 12),
    "cairn": (from_table(CAIRN_FACTS), 6),
    "greeting": (from_table(GREETINGS), 5),
    "refusal": (from_table(REFUSALS), 5),
}


def example(rng, kind=None):
    if kind is None:
        kind = rng.choices(list(KINDS), weights=[w for _, w in KINDS.values()])[0]
    q, a = KINDS[kind][0](rng)
    return kind, q, a


def render(turns):
    """ChatML text of (user, assistant) turns, as the GGUF chat template renders it."""
    s = "".join(f"<|im_start|>user\n{q}<|im_end|>\n<|im_start|>assistant\n{a}<|im_end|>\n" for q, a in turns)
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--dialogues", type=int, default=60000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--heldout-seed", type=int, default=1001)
    ap.add_argument("--heldout-per-kind", type=int, default=100)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    with open(f"{args.out}/train.jsonl", "w") as f:
        for _ in range(args.dialogues):
            n = rng.choices([1, 2, 3], weights=[6, 3, 1])[0]
            turns = [example(rng)[1:] for _ in range(n)]
            f.write(json.dumps({"turns": turns}) + "\n")

    rng = random.Random(args.heldout_seed)
    with open(f"{args.out}/heldout.jsonl", "w") as f:
        for kind in KINDS:
            for _ in range(args.heldout_per_kind):
                _, q, a = example(rng, kind)
                f.write(json.dumps({"kind": kind, "question": q, "answer": a}) + "\n")


if __name__ == "__main__":
    main()
