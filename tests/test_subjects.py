"""Subject keys: set only when a sentence states the current value of the user's changing facts."""

from __future__ import annotations

import pytest

from hermes_bowerbird.curation.extract import extract_candidates
from hermes_bowerbird.curation.subjects import (
    first_person_view,
    only_mentions,
    spoken_number,
    subject_of,
)


@pytest.mark.parametrize(
    "sentence, subject",
    [
        # age
        ("I'm 41.", "user:age"),
        ("I'm 41 and I had this moment at work where I wondered, is this it?", "user:age"),
        ("I just turned forty-one last week.", "user:age"),
        ("I turned 30 yesterday, which feels strange.", "user:age"),
        ("I'm now 52 years old.", "user:age"),
        ("I'm in my late thirties.", "user:age"),
        # diet
        ("I'm vegan now.", "user:diet"),
        ("These days I eat mostly plant-based.", "user:diet"),
        ("I've switched to a keto diet.", "user:diet"),
        ("I no longer eat meat.", "user:diet"),
        ("I've started eating fish again.", "user:diet"),
        ("I went pescatarian in January.", "user:diet"),
        ("I'm not strictly vegetarian anymore.", "user:diet"),
        ("Mostly vegan, with the odd exception when I travel.", "user:diet"),
        ("I'm doing intermittent fasting these days.", "user:diet"),
        ("I think I'm vegan at heart now.", "user:diet"),
        # relationship
        ("We got divorced last year.", "user:relationship"),
        ("I started dating someone from my climbing gym.", "user:relationship"),
        ("I'm seeing someone new.", "user:relationship"),
        ("so Gaspard and I stopped seeing each other, it fizzled out", "user:relationship"),
        ("Teodor and I are officially together now.", "user:relationship"),
        ("I'm going through a divorce.", "user:relationship"),
        ("My girlfriend Priya moved in with me.", "user:relationship"),
        ("We broke up in March.", "user:relationship"),
        ("I'm single again.", "user:relationship"),
        ("We just got engaged!", "user:relationship"),
        ("My divorce is final as of Friday.", "user:relationship"),
        ("My wife is Ana.", "user:relationship"),
        ("My partner, Jordan.", "user:relationship"),
        ("My husband's name is Tom.", "user:relationship"),
        ("My wife and I have been married for ten years.", "user:relationship"),
        ("My boyfriend Max and I broke up last week.", "user:relationship"),
        # residence, home, origin
        ("We relocated to Denver in the spring.", "user:residence"),
        ("I'm now based in Rotterdam.", "user:residence"),
        ("I don't live in Leeds anymore.", "user:residence"),
        ("I moved here from Texas.", "user:residence"),
        # a food that disagrees with the user
        ("Gluten makes me ill.", "user:health:intolerance:gluten"),
        ("I can't eat onions.", "user:health:intolerance:onions"),
        ("I'm wheat intolerant.", "user:health:intolerance:wheat"),
        ("Garlic doesn't agree with me.", "user:health:intolerance:garlic"),
        ("I've been getting the train to work since my bike was stolen.", "user:work-location"),
        # what the user studies, one slot per subject
        ("I'm learning Japanese.", "user:study:japanese"),
        ("I'm doing a part-time MSc in data science at Birkbeck.", "user:study:data-science"),
        ("I'm taking a course on data science on Coursera.", "user:study:data-science"),
        ("I'm studying law at UCL.", "user:study:law"),
        # an injury told by how it happened, to any part it names
        ("I wrecked my left knee skiing a few years ago.", "user:health:knee-injury"),
        ("I tore my ACL playing football.", "user:health:acl-injury"),
        # how the user gets to work, whatever they ride
        ("I ride a Brompton to the office most days.", "user:work-location"),
        ("I catch the 7:42 train to work.", "user:work-location"),
        ("We bought a small cottage near the coast.", "user:home"),
        ("I grew up in Manila.", "user:origin"),
        # work
        ("I work at Stripe on the payments team.", "user:employer"),
        ("I joined Shopify as a staff engineer.", "user:employer"),
        ("I just quit my job.", "user:employer"),
        ("I got laid off on Monday.", "user:employer"),
        ("I run my own design studio.", "user:employer"),
        ("I no longer work for the agency.", "user:employer"),
        ("I'm now a product manager.", "user:job"),
        ("I work as a paramedic.", "user:job"),
        ("I teach chemistry at Oakridge High.", "user:job"),
        ("I teach at a primary school in Leeds.", "user:job"),
        ("I'm retired.", "user:job"),
        ("I got promoted to team lead.", "user:job"),
        ("i got the trainer job!! starting 12 august", "user:job"),
        ("I landed the job at Figma.", "user:job"),
        ("Dr aubanel dropped carbimazole to 15mg daily", "user:medication:carbimazole"),
        ("I take naproxen 500 mg two times per day", "user:medication:naproxen"),
        ("I'm off budesonide completely as of last week", "user:medication:budesonide"),
        ("My new address is 7 Lermontov St.", "user:home"),
        ("I signed a lease: Hammerstrasse 68, 4057 Basel, third floor.", "user:home"),
        ("Our new flat is at 12 Elm Road.", "user:home"),
        ("I'm now events manager at Soar Valley.", "user:job"),
        ("and I've been made events manager! £35,500 from 1 January", "user:job"),
        ("They made me team lead.", "user:job"),
        ("I'm switching careers to nursing.", "user:job"),
        ("I work remotely these days.", "user:work-location"),
        ("I bike to work most days.", "user:work-location"),
        # family, pets, vehicles
        ("We have two kids.", "user:children"),
        ("We adopted a rescue dog last month.", "user:pet:dog"),
        ("My cat Miso is fourteen.", "user:pet:cat"),
        ("Our dog died in the summer.", "user:pet:dog"),
        ("My dog is called Rex.", "user:pet:dog"),
        ("My new puppy, Pip, arrived today!", "user:pet:dog"),
        ("I drive a Subaru Outback.", "user:car"),
        ("I sold my car.", "user:car"),
        ("I ride a vintage motorcycle.", "user:vehicle:motorcycle"),
        ("I got a new e-bike.", "user:vehicle:e-bike"),
        # health and habits
        ("I was diagnosed with type 2 diabetes.", "user:health:diabetes"),
        ("I have ADHD.", "user:health:adhd"),
        ("My therapist believes I have ADHD.", "user:health:adhd"),
        ("I've recovered from burnout.", "user:health:burnout"),
        ("I'm pregnant!", "user:health:pregnancy"),
        ("I have a torn knee ligament.", "user:health:knee-injury"),
        ("I have a bad left knee, so no steep hikes.", "user:health:knee-injury"),
        ("I'm 62 kg now, 158 cm.", "user:weight"),
        ("I have a right shoulder injury.", "user:health:shoulder-injury"),
        # a condition named by any part an injury is named by
        ("I have a bad elbow, so no tennis for me.", "user:health:elbow-injury"),
        ("I suffer from a hamstring injury.", "user:health:hamstring-injury"),
        ("I’m living with a hamstring injury.", "user:health:hamstring-injury"),
        ("I'm working at Deloitte now.", "user:employer"),
        ("I'm now taking iron tablets.", "user:medication:iron"),
        ("I'm currently being treated for anxiety.", "user:health:anxiety"),
        ("I have a severe peanut allergy.", "user:allergy:peanut"),
        ("My shellfish allergy flared up again.", "user:allergy:shellfish"),
        ("I'm Muslim.", "user:faith"),
        ("I'm a practicing Catholic.", "user:faith"),
        ("I converted to Islam last year.", "user:faith"),
        ("I'm British.", "user:origin"),
        ("I'm Canadian, eh.", "user:origin"),
        ("I'm half Korean.", "user:origin"),
        ("I'm Dutch but I've lived in Toronto for ten years.", "user:origin"),
        ("Deploys now go through ArgoCD, make deploy-prod is deprecated.", "project:deploy-tool"),
        ("Our builds run on Buildkite.", "project:build-tool"),
        ("I'm Brian.", "user:name"),  # names that end like a people's
        ("I'm Trish.", "user:name"),
        ("I sprained my ankle so no running for a few weeks.", "user:health:ankle-injury"),
        ("I've just torn my left knee again.", "user:health:knee-injury"),
        ("I quit smoking two years ago.", "user:habit:smoking"),
        ("I don't drink anymore.", "user:habit:drinking"),
        ("I stopped drinking coffee.", "user:habit:caffeine"),
        ("I take a vitamin D supplement.", "user:medication:vitamin-d"),
        ("I'm on sertraline for my anxiety.", "user:medication:sertraline"),
        ("I'm on 20mg of lisinopril.", "user:medication:lisinopril"),
        ("My doctor upped my sertraline to 100mg.", "user:medication:sertraline"),
        ("My metformin dose went down to 500 mg.", "user:medication:metformin"),
        ("My metformin went up to 1000.", "user:medication:metformin"),  # the unit unsaid
        ("I'm on Ozempic now.", "user:medication:ozempic"),
        ("I'm now on insulin.", "user:medication:insulin"),
        ("I take wegovy these days.", "user:medication:wegovy"),
        ("I switched from metformin to ozempic.", "user:medication:ozempic"),
        ("I started on insulin last week.", "user:medication:insulin"),
        ("The doctor switched me from metformin to sitagliptin.", "user:medication:sitagliptin"),
        ("Nasseri put me on ezetimibe 10 mg instead.", "user:medication:ezetimibe"),
        ("My GP took me off sertraline.", "user:medication:sertraline"),
        ("I'm now on escitalopram 10 mg.", "user:medication:escitalopram"),
        ("I'm coeliac.", "user:health:celiac"),
        # an allergy named first, or said not to be one (which ends the slot)
        ("It's sulfa drugs I'm allergic to, penicillin is fine.", "user:allergy:sulfa"),
        ("I'm not allergic to penicillin after all.", "user:allergy:penicillin"),
        # beside a diet, not one
        ("I'm lactose intolerant so go easy on cheese.", "user:health:lactose-intolerance"),
        ("My new number is 086 555 7710.", "user:phone-number"),
        ("New number btw, switched to Telia: 482 19 337.", "user:phone-number"),
        ("New phone too, number's 07700 900461.", "user:phone-number"),
        ("I took the offer at Mollie.", "user:employer"),
        ("I'm with Tucson Electric Power now as a lineman apprentice.", "user:employer"),
        ("I have a new job at Lumen Studio starting march.", "user:employer"),
        ("Dr. Romero switched me to losartan 50, same copay.", "user:medication:losartan"),
        (
            "Dr. Mäkelä has switched me from warfarin to apixaban, 5 mg twice a day.",
            "user:medication:apixaban",
        ),
        ("I'm on metformin 500 for prediabetes.", "user:medication:metformin"),
        ("I had to stop the rosuvastatin too, still aches.", "user:medication:rosuvastatin"),
        # changed by whoever prescribes it, said of them
        ("He's swapping the atorvastatin for rosuvastatin.", "user:medication:rosuvastatin"),
        ("He's switching me to rosuvastatin.", "user:medication:rosuvastatin"),
        ("She upped the sertraline to 100mg.", "user:medication:sertraline"),
        ("He stopped the omeprazole.", "user:medication:omeprazole"),
        (
            "The cardiologist is replacing the atorvastatin with rosuvastatin.",
            "user:medication:rosuvastatin",
        ),
        ("I've been moved to Dr. Soraya Nasseri at the same practice.", "user:contact:doctor"),
        ("I've been seeing someone, Anika, she's a vet nurse.", "user:relationship"),
        # a car told by its make, or swapped for another in one breath
        ("I bought a Honda Civic.", "user:car"),
        ("I sold the transit last week, got a vw crafter now.", "user:car"),
        ("I sold the Civic and bought a Tesla Model 3.", "user:car"),
        # the people the user goes to, named in lowercase after a title, or by who sees them
        ("My GP is dr hollis.", "user:contact:gp"),
        # named after what they are
        ("Our landlord is a guy called Greg.", "user:contact:landlord"),
        ("Our new landlord is a company called Grainger.", "user:contact:landlord"),
        ("My doctor is now dr hollis.", "user:contact:doctor"),
        ("Dr patel retired so I'm seeing dr hollis now.", "user:contact:doctor"),
        ("I see Dr. Moreau for my back.", "user:contact:doctor"),
        ("I'm seeing a new physio, dr ana ruiz.", "user:contact:physio"),
        # weight
        ("I weigh 82 kg right now.", "user:weight"),
        ("I'm down to 78 kg!", "user:weight"),
        ("Down to 88 kg now!", "user:weight"),
        ("I'm back up to 85kg, ugh.", "user:weight"),
        ("My weight is 12 stone.", "user:weight"),
        ("Our favourite restaurant is Casa Pepe.", "user:favourite:restaurant"),
        ("I drink about four coffees a day.", "user:habit:caffeine"),
        ("I smoke 10 cigarettes a day.", "user:habit:smoking"),
        ("I listen to everything on Spotify, mostly lo-fi.", "user:music-app"),
        ("I stopped going to yoga, switched to pilates instead.", "user:routine:yoga"),
        ("I started going to the gym.", "user:routine:gym"),
        # who the user reports to
        ("My manager is Priya.", "user:manager"),
        ("I report to Sam now.", "user:manager"),
        ("Sarah is my new boss.", "user:manager"),
        # hobbies and routines
        ("I meditate for 60 minutes every morning.", "user:routine:meditation"),
        ("I've taken up pottery.", "user:routine:pottery"),
        ("I run 5k three times a week.", "user:routine:running"),
        ("I play tennis on Sundays.", "user:routine:tennis"),
        ("I no longer play the piano.", "user:routine:music"),
        ("I go to the gym before work.", "user:routine:gym"),
        ("I'm training for a marathon.", "user:routine:running"),
        ("I've been swimming laps twice a week.", "user:routine:swimming"),
        ("I gave up climbing after the injury.", "user:routine:climbing"),
        # favourites and tools
        ("My favourite book right now is Piranesi.", "user:favourite:book"),
        ("Radiohead is my favourite band.", "user:favourite:band"),
        ("I've switched to Firefox.", "user:browser"),
        ("I use Obsidian for my notes.", "project:notes-app"),
        ("We migrated to Postgres.", "project:database"),
        ("We're on Postgres 15 for the main database.", "project:database"),
        ("I'm on Ubuntu.", "user:os"),
        # the user in the third person (tool and model written memories)
        ("The user lives in Porto.", "user:residence"),
        ("User is vegetarian.", "user:diet"),
        ("The user's partner is called Sam.", "user:relationship"),
        ("The user works at Globex.", "user:employer"),
        ("Turns out I have fructose malabsorption.", "user:health:fructose-malabsorption"),
        ("I have plantar fasciitis.", "user:health:plantar-fasciitis"),
        ("We booked Crispin Aldridge as our photographer, £1,950.", "user:contact:photographer"),
        ("My new sparky is Bronwyn Teale.", "user:contact:electrician"),
        # the name the user asks to be called
        ("Call me Jo.", "user:name"),
        ("Hi, you can call me Jo", "user:name"),
    ],
)
def test_statements_of_current_values_get_a_subject(sentence: str, subject: str) -> None:
    assert subject_of(sentence) == subject


@pytest.mark.parametrize(
    "sentence",
    [
        # hypotheticals, plans, wishes
        "If I moved to Berlin I would need a new job.",
        # a call asked for, not a name
        "I'm busy right now, call me later.",
        "Call me back at 5 about the quote.",
        # working for a while, not for someone
        "I'm working at the moment, call me later.",
        "I'm working for a few more hours on the report.",
        "I've been thinking about going vegan.",
        "I want to move to Lisbon someday.",
        "I'm going to quit my job next month.",
        "I'll be 40 in March.",
        "Maybe I should take up pottery.",
        "I wish I lived in Kyoto.",
        "I'd love to get a dog.",
        "I'm considering going keto.",
        # questions
        "Am I too old to start running?",
        "Should I switch to Firefox?",
        "Is it weird that I'm 41 and single?",
        # the past
        "I used to live in Chicago.",
        "I used to be vegan.",
        "When I was 25 I lived in Madrid.",
        "I was a teacher for ten years.",
        "Back when I lived in Leeds, I cycled everywhere.",
        # other people
        "My brother moved to Lisbon.",
        "She's vegan and lives in Austin.",
        "My wife has been eating vegan for a month.",
        "My sister is 41.",
        "My mum weighs 60 kg.",
        "She sold her Civic and bought a Tesla.",
        "Her manager is Tom.",
        "My dad drinks five coffees a day.",
        "I listen to podcasts on my commute.",
        "We're on a tight deadline.",
        "We upgraded to a bigger flat.",
        "I'm going to quit yoga next month.",
        "I drink two litres of water a day.",
        "My manager is great.",
        "This is my boss.",
        "She upped her sertraline to 100mg.",
        "My son's doctor stopped the ritalin.",
        "Leo's paediatrician is swapping the ritalin for focalin.",
        "The doctor bumped the metformin up to 1000mg for my dad.",
        "He's swapping the atorvastatin for rosuvastatin next month.",
        "I weigh myself every morning.",
        "I'm down to two coffees a day.",
        "I'm down to 50 pounds in my account.",
        "I'm up to 10 kg of flour a week for the bakery.",
        "Up to 10 kg of flour a week now.",
        "Prices went down to 5 kg.",
        "When I weighed 90kg I felt awful.",
        "I'd like to get down to 75 kg.",
        "He got divorced last year.",
        "Elena said she's glad I moved here.",
        # quotes and jokes
        "I said 'I'm an architect, I only know the Latin for concrete.'",
        'She told me "I live in Paris now" and hung up.',
        # the second half of a quotation the sentence splitter cut off ('She looked at me. "Honestly? I'm ...')
        "I'm vegan now,\" she said.",
        "I moved to Berlin last year,' Marta told me.",
        # someone else's belief or question
        "My boss thinks I'm a designer.",
        "People assume I'm from Spain.",
        "She asked if I'm still vegan.",
        # look-alikes
        "I'm 20 minutes late, sorry.",
        "I'm 100% sure about this.",
        "I'm a big believer in naps.",
        "I'm a light sleeper.",
        "I joined a book club.",
        "I moved to Obsidian for notes.",
        "I have a back porch that needs painting.",
        "I run the team meetings every Monday.",
        "Home is where the heart is.",
        "The house is mostly vegan but the kids eat what they want.",
        "My morning meditation was rough today.",
        "We live in interesting times.",
        "Moving to design development next.",
        "Vegan, gluten-free and nut-free options are available.",
        "I'm on magazine duty this week.",
        "I got a mini fridge for the office.",
        "My metformin is going up to 1000 next week.",  # a plan, not yet the dose
        "I'm seeing the doctor tomorrow.",
        "The new number of cases is 5000.",
        "Tom and I are together on this project.",
        "We stopped talking about it.",
        "My address is on the form.",
        "I feel like I'm 80.",
        "I'm the biggest fan in London.",
        "I'm a regular at The Crown.",
        "The kids call me Madame Lolo, it melts my heart.",  # a nickname others use
        "We've moved to Parkside Dental.",  # a practice, no new home
        "Stress makes me ill.",  # no food
        "I can't have coffee after 3 or I won't sleep.",  # a time, no intolerance
        "My son can't eat eggs.",  # his
    ],
)
def test_non_statements_get_no_user_subject(sentence: str) -> None:
    subject = subject_of(sentence)
    assert subject is None or not subject.startswith("user:"), subject


@pytest.mark.parametrize(
    "old, new, subject",
    [
        ("I'm a strict vegan.", "I'm flexitarian now.", "user:diet"),
        ("I'm vegetarian.", "I've started eating meat again.", "user:diet"),
        ("We've been married for ten years.", "We got divorced in May.", "user:relationship"),
        ("I'm divorced.", "I started dating Elena.", "user:relationship"),
        ("I'm single.", "I'm in a relationship now.", "user:relationship"),
        ("I'm 40.", "I just turned 41.", "user:age"),
        ("I live in Austin, Texas.", "We moved to Vermont.", "user:residence"),
        ("I work at Acme.", "I quit my job.", "user:employer"),
        (
            "I'm a corporate architect.",
            "I'm pivoting to sustainable building consulting.",
            "user:job",
        ),
        ("I'm a nurse.", "I'm retired now.", "user:job"),
        ("I run every morning.", "I stopped running.", "user:routine:running"),
        ("I'm a smoker.", "I quit smoking.", "user:habit:smoking"),
        ("I have asthma.", "My asthma is under control.", "user:health:asthma"),
        ("I drive a Civic.", "I sold my car.", "user:car"),
        ("I drive a 2015 Honda Civic.", "I sold the Civic and bought a Tesla Model 3.", "user:car"),
        (
            "My manager is Priya.",
            "Priya left the company, my new manager is Sarah Okafor.",
            "user:manager",
        ),
        (
            "I drink about four coffees a day.",
            "I've cut down to one coffee a day.",
            "user:habit:caffeine",
        ),
        (
            "I listen to everything on Spotify.",
            "I switched from Spotify to Apple Music.",
            "user:music-app",
        ),
        (
            "We're on Postgres 15 for the main database.",
            "We upgraded the main database to Postgres 16 yesterday.",
            "project:database",
        ),
        ("We use Chrome.", "I've switched to Firefox.", "user:browser"),
        ("We use Jira.", "We track tickets in Linear now.", "project:issue-tracker"),
        ("We use Jenkins.", "We moved all our CI over to Buildkite.", "project:ci"),
        (
            "Our pediatrician is Dr. Alvarez.",
            "We switched pediatricians, now seeing Dr. Chen.",
            "user:contact:pediatrician",
        ),
        ("I weigh 82 kg.", "Good news, I'm down to 78 kg!", "user:weight"),
        (
            "I take 50mg of sertraline every morning.",
            "My doctor upped my sertraline to 100mg.",
            "user:medication:sertraline",
        ),
        (
            "I drive a Ford Transit.",
            "I sold the transit last week, got a vw crafter now.",
            "user:car",
        ),
        (
            "My doctor is Dr Patel.",
            "Dr patel retired so I'm seeing dr hollis now.",
            "user:contact:doctor",
        ),
        ("My manager is Kate Brown.", "Kate left, my new manager is Lou.", "user:manager"),
        (
            "I'm on rosuvastatin 10 mg at night.",
            "I had to stop the rosuvastatin too, still aches.",
            "user:medication:rosuvastatin",
        ),
    ],
)
def test_new_values_share_the_old_subject(old: str, new: str, subject: str) -> None:
    assert subject_of(old) == subject
    assert subject_of(new) == subject


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The user lives in Porto.", "I live in Porto."),
        ("User is vegetarian.", "I am vegetarian."),
        ("The user's partner is Sam.", "my partner is Sam."),
        ("the user moved to Lisbon", "I moved to Lisbon"),
        ("The user watches films.", "I watch films."),
        ("The user interface is slow.", "The user interface is slow."),
    ],
)
def test_first_person_view(text: str, expected: str) -> None:
    assert first_person_view(text) == expected


@pytest.mark.parametrize(
    "text, value",
    [
        ("41", 41),
        ("forty-one", 41),
        ("forty one", 41),
        ("thirty", 30),
        ("nineteen", 19),
        ("forty-eleven", None),
        ("lots", None),
    ],
)
def test_spoken_number(text: str, value: int | None) -> None:
    assert spoken_number(text) == value


def test_spelled_ages_carry_digits() -> None:
    found = extract_candidates("I'm forty-one years old and I still can't cook rice.", "")
    assert [c.subject for c in found] == ["user:age"]
    assert "(age 41)" in found[0].content


def test_self_description_fragments_are_expanded() -> None:
    found = extract_candidates(
        "I wrote it down: I am a teacher. A father. A flexitarian. A runner.", ""
    )
    by_subject = {c.subject: c.content for c in found if c.subject}
    assert by_subject.get("user:diet") == "I am a flexitarian."
    assert not any(c.content == "I am a father." for c in found)


def test_a_contained_sentence_keeps_its_own_subject() -> None:
    found = extract_candidates("I resigned. I'm pivoting to landscape design.", "")
    assert {"user:employer", "user:job"} <= {c.subject for c in found}


@pytest.mark.parametrize(
    "sentence, subject",
    [
        ("Lost my job as a banker yesterday.", "user:employer"),
        ("I started my own online clothing store.", "user:employer"),
        ("I play clarinet!", "user:routine:music"),
        ("I started playing acoustic guitar five years ago.", "user:routine:music"),
        ("I think I am an expert hiker now.", None),
        ("I teach yoga on weekends.", None),  # teaching, but no school: not a job
        ("I usually get to work by 8:30 AM.", None),  # when they arrive, not how
        ("I'm learning to cook.", None),  # no subject of study named
        ("I'm studying for my driving test.", None),
        ("I take my gym bag with me to work on Tuesdays.", None),
        ("My son sprained his ankle.", None),  # someone else's injury
        ("My son has a nut allergy.", None),
        ("I'm 5 kg away from my goal weight.", None),
        ("I'm 3 kg lighter than last year.", None),
        ("I have a food allergy.", None),  # no allergen
        ("Deploys now go through the usual review.", None),
        ("I'm English teacher.", None),
        ("I hurt my feelings.", None),
        ("I teach piano in my spare time.", None),
        ("It's a reminder of why I started playing basketball.", None),
        ("She wrote about how I play guitar for the kids.", None),
        ("We switched to GitHub Issues.", "project:issue-tracker"),
        ("I track bugs with Jira.", "project:issue-tracker"),
        ("We use linear regression for the forecast.", None),  # the tool only with its capital
        ("We use teams of two for code review.", None),
        ("We use Teams for all our calls.", "project:chat-app"),
        (
            "i switched to signal last year",
            "project:chat-app",
        ),  # no other reading: lower case will do
        ("I track my runs in Strava.", None),  # tracking, but no issue tracker
        ("We moved the standup to Friday.", None),
    ],
)
def test_more_phrasings(sentence: str, subject: str | None) -> None:
    assert subject_of(sentence) == subject


@pytest.mark.parametrize(
    "sentence, subject",
    [
        ("We deploy with Ansible.", "project:deploy-tool"),
        ("We always deploy with ansible from the bastion.", "project:deploy-tool"),
        ("We host on Hetzner these days.", "project:hosting"),
        ("I monitor everything with Grafana.", "project:monitoring"),
        # a day, a month or an environment after the verb is no tool: the tool on record stays current
        ("We always deploy on Tuesdays.", None),
        ("We deploy to production every Friday.", None),
        ("We deploy to staging first, then to prod.", None),
        ("I test on Mondays before the sprint review.", None),
        ("We build for release on demand.", None),
    ],
)
def test_the_verb_names_a_slot_only_for_a_tool(sentence: str, subject: str | None) -> None:
    assert subject_of(sentence) == subject


@pytest.mark.parametrize(
    "sentence, subject, mentions",
    [
        # what a partner or pet does or likes: filed under the slot, but no new value of it
        ("My partner Jordan is gluten intolerant.", "user:relationship", True),
        ("My partner Jordan just started a new job at Monzo.", "user:relationship", True),
        ("My husband is a doctor.", "user:relationship", True),
        ("My wife Ana and I met in 2010.", "user:relationship", True),
        ("My dog Biscuit is scared of fireworks.", "user:pet:dog", True),
        ("My dog Biscuit loves the beach.", "user:pet:dog", True),
        ("We adopted a second cat, Byte!", "user:pet:cat", True),
        ("We got another dog.", "user:pet:dog", True),
        ("My manager Priya wants a written update every Thursday.", "user:manager", True),
        ("My dentist Dr. Okafor says I grind my teeth.", "user:contact:dentist", True),
        # who the partner or pet is, or what the couple is
        ("My wife is Ana.", "user:relationship", False),
        ("My partner, Jordan.", "user:relationship", False),
        ("My girlfriend Priya moved in with me.", "user:relationship", False),
        ("My boyfriend Max and I broke up last week.", "user:relationship", False),
        ("We got divorced last year.", "user:relationship", False),
        ("My cat Miso is fourteen.", "user:pet:cat", False),
        ("My dog is called Rex.", "user:pet:dog", False),
        ("My accountant is Marco Bellini, he does my taxes.", "user:contact:accountant", False),
        ("I switched accountants, it's now Julia Weber.", "user:contact:accountant", False),
        ("Dr. Patel is my new GP.", "user:contact:gp", False),
        ("I registered with a new GP, Dr. Lewis.", "user:contact:gp", False),
        ("My new landlord is Mrs. Khan.", "user:contact:landlord", False),
        ("My landlord is Greek.", None, False),  # no name
        ("My boss is Italian.", None, False),
        ("My sister is a dentist.", None, False),
        ("I live in Porto.", "user:residence", False),
        ("The weather is nice.", None, False),
    ],
)
def test_only_mentions(sentence: str, subject: str | None, mentions: bool) -> None:
    assert subject_of(sentence) == subject
    assert only_mentions(sentence) is mentions
