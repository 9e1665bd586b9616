// Code generated from Debian iso-codes 4.15.0 (/usr/share/iso-codes/json/iso_639-3.json); DO NOT EDIT.
// The tables are data, not logic: regenerate them from a newer iso-codes when ISO 639-3 changes,
// and bump Version (GW-J2J-21) because dc:language output may change (J2N-07, [IRDB-N22]).

package crosswalk

// iso6393Codes holds every ISO 639-3 identifier (7910 codes, including the special
// codes mis, mul, und and zxx), sorted, three letters each, concatenated. Looked up by
// binary search in isISO6393 (J2N-07: a code outside this list becomes und).
const iso6393Codes = "" +
	"aaaaabaacaadaaeaafaagaahaaiaakaalaanaaoaapaaqaaraasaataauaawaaxaazabaabbabcabdabeabfabgabhabiabj" +
	"abkablabmabnaboabpabqabrabsabtabuabvabwabxabyabzacaacbacdaceacfachaciackaclacmacnacpacqacracsact" +
	"acuacvacwacxacyaczadaadbaddadeadfadgadhadiadjadladnadoadqadradsadtaduadwadxadyadzaeaaebaecaedaee" +
	"aekaelaemaenaeqaeraesaeuaewaeyaezafbafdafeafgafhafiafkafnafoafpafrafsaftafuafzagaagbagcagdageagf" +
	"aggaghagiagjagkaglagmagnagoagqagragsagtaguagvagwagxagyagzahaahbahgahhahiahkahlahmahnahoahpahrahs" +
	"ahtaiaaibaicaidaieaifaigaihaiiaijaikailaimainaioaipaiqairaitaiwaixaiyajaajgajiajnajpajsajuajwajz" +
	"akaakbakcakdakeakfakgakhakiakjakkaklakmakoakpakqakraksaktakuakvakwakxakyakzalaalcaldalealfalhali" +
	"aljalkallalmalnaloalpalqalralsaltalualwalxalyalzamaambamcameamfamgamhamiamjamkamlammamnamoampamq" +
	"amramsamtamuamvamwamxamyamzanaanbancandaneanfanganhanianjankanlanmannanoanpanqanransantanuanvanw" +
	"anxanyanzaoaaobaocaodaoeaofaogaoiaojaokaolaomaonaoraosaotaouaoxaozapbapcapdapeapfapgaphapiapjapk" +
	"aplapmapnapoappapqaprapsaptapuapvapwapxapyapzaqcaqdaqgaqkaqmaqnaqpaqraqtaqzaraarbarcardareargarh" +
	"ariarjarkarlarnaroarparqarrarsaruarvarwarxaryarzasaasbascaseasfasgashasiasjaskaslasmasnasoaspasq" +
	"asrassastasuasvaswasxasyaszataatbatcatdateatgatiatjatkatlatmatnatoatpatqatratsattatuatvatwatxaty" +
	"atzauaaubaucaudaugauhauiaujaukaulaumaunauoaupauqaurautauuauwauxauyauzavaavbavdaveaviavkavlavmavn" +
	"avoavsavtavuavvawaawbawcaweawgawhawiawkawmawnawoawrawsawtawuawvawwawxawyaxbaxeaxgaxkaxlaxmaxxaya" +
	"aybaycaydayeaygayhayiaykaylaymaynayoaypayqayraysaytayuayzazaazbazdazeazgazjazmaznazoaztazzbaabab" +
	"bacbaebafbagbahbajbakbalbambanbaobapbarbasbaubavbawbaxbaybbabbbbbcbbdbbebbfbbgbbhbbibbjbbkbblbbm" +
	"bbnbbobbpbbqbbrbbsbbtbbubbvbbwbbxbbybcabcbbccbcdbcebcfbcgbchbcibcjbckbclbcmbcnbcobcpbcqbcrbcsbct" +
	"bcubcvbcwbcybczbdabdbbdcbddbdebdfbdgbdhbdibdjbdkbdlbdmbdnbdobdpbdqbdrbdsbdtbdubdvbdwbdxbdybdzbea" +
	"bebbecbedbeebefbegbehbeibejbekbelbembenbeobepbeqbesbetbeubevbewbexbeybezbfabfbbfcbfdbfebffbfgbfh" +
	"bfibfjbfkbflbfmbfnbfobfpbfqbfrbfsbftbfubfwbfxbfybfzbgabgbbgcbgdbgebgfbggbgibgjbgkbglbgnbgobgpbgq" +
	"bgrbgsbgtbgubgvbgwbgxbgybgzbhabhbbhcbhdbhebhfbhgbhhbhibhjbhlbhmbhnbhobhpbhqbhrbhsbhtbhubhvbhwbhx" +
	"bhybhzbiabibbidbiebifbigbikbilbimbinbiobipbiqbirbisbitbiubivbiwbixbiybizbjabjbbjcbjebjfbjgbjhbji" +
	"bjjbjkbjlbjmbjnbjobjpbjrbjsbjtbjubjvbjwbjxbjybjzbkabkcbkdbkfbkgbkhbkibkjbkkbklbkmbknbkobkpbkqbkr" +
	"bksbktbkubkvbkwbkxbkybkzblablbblcbldbleblfblhblibljblkbllblmblnbloblpblqblrblsbltblvblwblxblyblz" +
	"bmabmbbmcbmdbmebmfbmgbmhbmibmjbmkbmlbmmbmnbmobmpbmqbmrbmsbmtbmubmvbmwbmxbmzbnabnbbncbndbnebnfbng" +
	"bnibnjbnkbnlbnmbnnbnobnpbnqbnrbnsbnubnvbnwbnxbnybnzboabobbodboebofbogbohboibojbokbolbombonboobop" +
	"boqborbosbotboubovbowboxboybozbpabpcbpdbpebpgbphbpibpjbpkbplbpmbpnbpobppbpqbprbpsbptbpubpvbpwbpx" +
	"bpybpzbqabqbbqcbqdbqfbqgbqhbqibqjbqkbqlbqmbqnbqobqpbqqbqrbqsbqtbqubqvbqwbqxbqybqzbrabrbbrcbrdbre" +
	"brfbrgbrhbribrjbrkbrlbrmbrnbrobrpbrqbrrbrsbrtbrubrvbrwbrxbrybrzbsabsbbscbsebsfbsgbshbsibsjbskbsl" +
	"bsmbsnbsobspbsqbsrbssbstbsubsvbswbsxbsybtabtcbtdbtebtfbtgbthbtibtjbtmbtnbtobtpbtqbtrbtsbttbtubtv" +
	"btwbtxbtybtzbuabubbucbudbuebufbugbuhbuibujbukbulbumbunbuobupbuqbusbutbuubuvbuwbuxbuybuzbvabvbbvc" +
	"bvdbvebvfbvgbvhbvibvjbvkbvlbvmbvnbvobvpbvqbvrbvtbvubvvbvwbvxbvybvzbwabwbbwcbwdbwebwfbwgbwhbwibwj" +
	"bwkbwlbwmbwnbwobwpbwqbwrbwsbwtbwubwwbwxbwybwzbxabxbbxcbxdbxebxfbxgbxhbxibxjbxkbxlbxmbxnbxobxpbxq" +
	"bxrbxsbxubxvbxwbxzbyabybbycbydbyebyfbygbyhbyibyjbykbylbymbynbyobypbyqbyrbysbytbyvbywbyxbyzbzabzb" +
	"bzcbzdbzebzfbzgbzhbzibzjbzkbzlbzmbznbzobzpbzqbzrbzsbztbzubzvbzwbzxbzybzzcaacabcaccadcaecafcagcah" +
	"cajcakcalcamcancaocapcaqcarcascatcavcawcaxcaycazcbbcbccbdcbgcbicbjcbkcblcbncbocbqcbrcbscbtcbucbv" +
	"cbwcbycccccdcceccgcchccjcclccmccoccpccrcdacdecdfcdhcdicdjcdmcdncdocdrcdscdycdzceacebcegcekcences" +
	"cetceycfacfdcfgcfmcgacgccggcgkchachbchcchdchechfchgchhchjchkchlchmchnchochpchqchrchtchuchvchwchx" +
	"chychzciacibciccidciecihcikcimcincipcirciwciycjacjecjhcjicjkcjmcjncjocjpcjscjvcjyckbckhcklckmckn" +
	"ckockqckrckscktckuckvckxckyckzclaclccldcleclhclicljclkcllclmclocltcluclwclycmacmecmgcmicmlcmmcmn" +
	"cmocmrcmscmtcnacnbcnccngcnhcnicnkcnlcnocnpcnqcnrcnscntcnucnwcnxcoacobcoccodcoecofcogcohcojcokcol" +
	"comconcoocopcoqcorcoscotcoucovcowcoxcozcpacpbcpccpgcpicpncpocpscpucpxcpycqdcracrbcrccrdcrecrfcrg" +
	"crhcricrjcrkcrlcrmcrncrocrqcrrcrscrtcrvcrwcrxcrycrzcsacsbcsccsdcsecsfcsgcshcsicsjcskcslcsmcsncso" +
	"cspcsqcsrcsscstcsvcswcsxcsycszctactcctdctectgcthctlctmctnctoctpctscttctuctyctzcuacubcuccuhcuicuj" +
	"cukculcuocupcuqcurcutcuucuvcuwcuxcuycvgcvncwacwbcwdcwecwgcwtcyacybcymcyoczhczkcznczocztdaadacdad" +
	"daedagdahdaidajdakdaldamdandaodaqdardasdaudavdawdaxdazdbadbbdbddbedbfdbgdbidbjdbldbmdbndbodbpdbq" +
	"dbrdbtdbudbvdbwdbydccdcrddadddddeddgddiddjddnddoddrddsddwdecdeddeedefdegdehdeidekdeldemdendepdeq" +
	"derdesdeudevdezdgadgbdgcdgddgedggdghdgidgkdgldgndgodgrdgsdgtdgwdgxdgzdhddhgdhidhldhmdhndhodhrdhs" +
	"dhudhvdhwdhxdiadibdicdiddifdigdihdiidijdikdildimdindiodipdiqdirdisdiudivdiwdixdiydizdjadjbdjcdjd" +
	"djedjfdjidjjdjkdjmdjndjodjrdjudjwdkadkgdkkdkrdksdkxdlgdlkdlmdlndmadmbdmcdmddmedmfdmgdmkdmldmmdmo" +
	"dmrdmsdmudmvdmwdmxdmydnadnddnedngdnidnjdnkdnndnodnrdntdnudnvdnwdnydoadobdocdoedofdohdoidokdoldon" +
	"doodopdoqdordosdotdovdowdoxdoydozdppdrbdrcdrddredrgdridrldrndrodrqdrsdrtdrudrydsbdsedshdsidsldsn" +
	"dsodsqdszdtadtbdtddthdtidtkdtmdtndtodtpdtrdtsdttdtudtyduadubducduedufdugduhduidukduldumdunduodup" +
	"duqdurdusduuduvduwduxduyduzdvadwadwkdwrdwsdwudwwdwydwzdyadybdyddygdyidymdyndyodyudyydzadzedzgdzl" +
	"dzndzoeaaebcebgebkeboebrebuecrecsecyeeeefaefeefiegaeglegmegoegyehsehueipeiteivejaekaekeekgekiekk" +
	"eklekmekoekpekrekyeleelhelielkellelmeloeluelxemaembemeemgemiemkemmemnempemqemsemuemwemxemyemzena" +
	"enbencendenfengenhenlenmennenoenqenrenuenvenwenxeotepiepoeraergerherierkeroerrerserterweseesgesh" +
	"esieskeslesmesnesoesqessestesuesyetbetcethetnetoetretsettetuetxetzeuseveevhevneweewoexteyaeyoeza" +
	"ezefaafabfadfaffagfahfaifajfakfalfamfanfaofapfarfasfatfaufaxfayfazfblfcsferffiffmfgrfiafiefiffij" +
	"filfinfipfirfitfiwfkkfkvflaflhflifllflnflrflyfmpfmufnbfngfnifodfoifomfonforfosfpefqsfrafrcfrdfrk" +
	"frmfrofrpfrqfrrfrsfrtfryfsefslfssfubfucfudfuefuffuhfuifujfulfumfunfuqfurfutfuufuvfuyfvrfwafwegaa" +
	"gabgacgadgaegafgaggahgaigajgakgalgamgangaogapgaqgargasgatgaugawgaxgaygazgbagbbgbdgbegbfgbggbhgbi" +
	"gbjgbkgblgbmgbngbogbpgbqgbrgbsgbugbvgbwgbxgbygbzgccgcdgcegcfgclgcngcrgctgdagdbgdcgddgdegdfgdggdh" +
	"gdigdjgdkgdlgdmgdngdogdqgdrgdsgdtgdugdxgeagebgecgedgefgeggehgeigejgekgelgeqgesgevgewgexgeygezgfk" +
	"gftggaggbggdggegggggkgglggtgguggwghaghcgheghhghkghlghnghoghrghsghtgiagibgicgidgiegiggihgiigilgim" +
	"gingipgiqgirgisgitgiugiwgixgiygizgjkgjmgjngjrgjugkagkdgkegkngkogkpgkuglaglbglcgldgleglgglhgljglk" +
	"gllgloglrgluglvglwglygmagmbgmdgmggmhgmlgmmgmngmrgmugmvgmxgmygmzgnagnbgncgndgnegnggnhgnignjgnkgnl" +
	"gnmgnngnognqgnrgntgnugnwgnzgoagobgocgodgoegofgoggohgoigojgokgolgomgongoogopgoqgorgosgotgougovgow" +
	"goxgoygozgpagpegpngqagqigqngqrgqugragrbgrcgrdgrggrhgrigrjgrmgrngrogrqgrrgrsgrtgrugrvgrwgrxgrygrz" +
	"gsegsggslgsmgsngsogspgssgswgtagtuguagubgucgudguegufgugguhguigujgukgulgumgunguogupguqgurgusgutguu" +
	"guwguxguzgvagvcgvegvfgvjgvlgvmgvngvogvpgvrgvsgvygwagwbgwcgwdgwegwfgwggwigwjgwmgwngwrgwtgwugwwgwx" +
	"gxxgyagybgydgyegyfgyggyigylgymgyngyogyrgyygyzgzagzigznhaahabhachadhaehafhaghahhaihajhakhalhamhan" +
	"haohaphaqharhashathauhavhawhaxhayhazhbahbbhbnhbohbshbuhcahchhdnhdshdyheahebhedheghehheihemherhgm" +
	"hgwhhihhrhhyhiahibhidhifhighihhiihijhikhilhinhiohirhithiwhixhjihkahkehkhhkkhknhkshlahlbhldhlehlt" +
	"hluhmahmbhmchmdhmehmfhmghmhhmihmjhmkhmlhmmhmnhmohmphmqhmrhmshmthmuhmvhmwhmyhmzhnahndhnehnghnhhni" +
	"hnjhnnhnohnshnuhoahobhochodhoehohhoihojholhomhoohophorhoshothovhowhoyhozhpohpshrahrchrehrkhrmhro" +
	"hrphrthruhrvhrwhrxhrzhsbhshhslhsnhsshtihtohtshtuhtxhubhuchudhuehufhughuhhuihujhukhulhumhunhuohup" +
	"huqhurhushuthuuhuvhuwhuxhuyhuzhvchvehvkhvnhvvhwahwchwohyahyehywiaiianiaribaibbibdibeibgibhiblibm" +
	"ibniboibribuibyicaichiclicridaidbidciddideidiidoidridsidtiduifaifbifeiffifkifmifuifyigbigeiggigl" +
	"igmignigoigsigwihbihiihpihwiiiiinijcijeijjijnijsikeikiikkiklikoikpikriksiktikuikvikwikxikzilailb" +
	"ileilgiliilkilmiloilpilsiluilvimaimiimlimnimoimrimsimtimyinainbindinginhinjinlinminninoinpinsint" +
	"inzioriouiowipiipkipoiquiqwireirhiriirkirnirriruirxiryisaiscisdiseisgishisiiskislismisnisoisrist" +
	"isuitaitbitditeitiitkitlitmitoitritsittitvitwitxityitziumivbivviwkiwmiwoiwsixcixliyaiyoiyxizhizr" +
	"izzjaajabjacjadjaejafjahjajjakjaljamjanjaojaqjasjatjaujavjaxjayjazjbejbijbjjbkjbmjbnjbojbrjbtjbu" +
	"jbwjcsjctjdajdgjdtjebjeejehjeijekjeljenjerjetjeujgbjgejgkjgojhijhsjiajibjicjidjiejigjihjiijiljim" +
	"jiojiqjitjiujivjiyjjejjrjkajkmjkojkpjkrjksjkujlejlsjmajmbjmcjmdjmijmljmnjmrjmsjmwjmxjnajndjngjni" +
	"jnjjnljnsjobjodjogjorjosjowjpajpnjprjqrjrajrbjrrjrtjrujsljuajubjucjudjuhjuijukjuljumjunjuojupjur" +
	"jusjutjuujuwjuyjvdjvnjwijyajyejyykaakabkackadkaekafkagkahkaikajkakkalkamkankaokapkaqkaskatkaukav" +
	"kawkaxkaykazkbakbbkbckbdkbekbgkbhkbikbjkbkkblkbmkbnkbokbpkbqkbrkbskbtkbukbvkbwkbxkbykbzkcakcbkcc" +
	"kcdkcekcfkcgkchkcikcjkckkclkcmkcnkcokcpkcqkcrkcskctkcukcvkcwkcxkcykczkdakdckddkdekdfkdgkdhkdikdj" +
	"kdkkdlkdmkdnkdpkdqkdrkdtkdukdwkdxkdykdzkeakebkeckedkeekefkegkehkeikejkekkelkemkenkeokepkeqkerkes" +
	"ketkeukevkewkexkeykezkfakfbkfckfdkfekffkfgkfhkfikfjkfkkflkfmkfnkfokfpkfqkfrkfskftkfukfvkfwkfxkfy" +
	"kfzkgakgbkgekgfkggkgikgjkgkkglkgmkgnkgokgpkgqkgrkgskgtkgukgvkgwkgxkgykhakhbkhckhdkhekhfkhgkhhkhj" +
	"khkkhlkhmkhnkhokhpkhqkhrkhskhtkhukhvkhwkhxkhykhzkiakibkickidkiekifkigkihkiikijkikkilkimkinkiokip" +
	"kiqkirkiskitkiukivkiwkixkiykizkjakjbkjckjdkjekjgkjhkjikjjkjkkjlkjmkjnkjokjpkjqkjrkjskjtkjukjvkjx" +
	"kjykjzkkakkbkkckkdkkekkfkkgkkhkkikkjkkkkklkkmkknkkokkpkkqkkrkkskktkkukkvkkwkkxkkykkzklaklbklckld" +
	"kleklfklgklhklikljklkkllklmklnkloklpklqklrklskltkluklvklwklxklyklzkmakmbkmckmdkmekmfkmgkmhkmikmj" +
	"kmkkmlkmmkmnkmokmpkmqkmrkmskmtkmukmvkmwkmxkmykmzknaknbknckndkneknfkngkniknjknkknlknmknnknoknpknq" +
	"knrknskntknuknvknwknxknyknzkoakockodkoekofkogkohkoikokkolkomkonkookopkoqkorkoskotkoukovkowkoykoz" +
	"kpakpbkpckpdkpekpfkpgkphkpikpjkpkkplkpmkpnkpokpqkprkpskptkpukpvkpwkpxkpykpzkqakqbkqckqdkqekqfkqg" +
	"kqhkqikqjkqkkqlkqmkqnkqokqpkqqkqrkqskqtkqukqvkqwkqxkqykqzkrakrbkrckrdkrekrfkrhkrikrjkrkkrlkrnkrp" +
	"krrkrskrtkrukrvkrwkrxkrykrzksaksbkscksdkseksfksgkshksiksjkskkslksmksnksokspksqksrksskstksuksvksw" +
	"ksxksykszktaktbktcktdktektfktgkthktiktjktkktlktmktnktoktpktqktskttktuktvktwktxktyktzkuakubkuckud" +
	"kuekufkugkuhkuikujkukkulkumkunkuokupkuqkurkuskutkuukuvkuwkuxkuykuzkvakvbkvckvdkvekvfkvgkvhkvikvj" +
	"kvkkvlkvmkvnkvokvpkvqkvrkvtkvukvvkvwkvxkvykvzkwakwbkwckwdkwekwfkwgkwhkwikwjkwkkwlkwmkwnkwokwpkwr" +
	"kwskwtkwukwvkwwkwxkwykwzkxakxbkxckxdkxfkxhkxikxjkxkkxmkxnkxokxpkxqkxrkxskxtkxvkxwkxxkxykxzkyakyb" +
	"kyckydkyekyfkygkyhkyikyjkykkylkymkynkyokypkyqkyrkyskytkyukyvkywkyxkyykyzkzakzbkzckzdkzekzfkzgkzi" +
	"kzkkzlkzmkznkzokzpkzqkzrkzskzukzvkzwkzxkzykzzlaalablacladlaelaflaglahlailajlallamlanlaolaplaqlar" +
	"laslatlaulavlawlaxlaylazlbblbclbelbflbglbilbjlbklbllbmlbnlbolbqlbrlbslbtlbulbvlbwlbxlbylbzlcclcd" +
	"lcelcflchlcllcmlcplcqlcsldaldblddldgldhldildjldkldlldmldnldoldpldqlealeblecledleeleflehleilejlek" +
	"lellemlenleolepleqlerlesletleulevlewlexleylezlfalfnlgalgblgglghlgilgklgllgmlgnlgolgqlgrlgtlgulgz" +
	"lhalhhlhilhllhmlhnlhplhslhtlhulialibliclidlielifliglihlijliklillimlinliolipliqlirlislitliulivliw" +
	"lixliylizljaljeljiljlljpljwljxlkalkblkclkdlkelkhlkilkjlkllkmlknlkolkrlkslktlkulkyllallbllclldlle" +
	"llfllgllhllilljllklllllmllnllpllqllsllullxlmalmblmclmdlmelmflmglmhlmilmjlmklmllmnlmolmplmqlmrlmu" +
	"lmvlmwlmxlmylnalnblndlnglnhlnilnjlnllnmlnnlnslnulnwlnzloaloblocloelofloglohloilojloklollomlonloo" +
	"loploqlorloslotloulovlowloxloylozlpalpelpnlpolpxlqrlralrclrelrglrilrklrllrmlrnlrolrrlrtlrvlrzlsa" +
	"lsblsclsdlselshlsilsllsmlsnlsolsplsrlsslstlsvlswlsyltcltglthltiltnltoltsltultzlualublucludlueluf" +
	"lugluilujluklullumlunluolupluqlurluslutluuluvluwluyluzlvalvilvklvslvulwalwelwglwhlwllwmlwolwslwt" +
	"lwulwwlxmlyalyglynlzhlzllznlzzmaamabmadmaemafmagmahmaimajmakmalmammanmaqmarmasmatmaumavmawmaxmaz" +
	"mbambbmbcmbdmbembfmbhmbimbjmbkmblmbmmbnmbombpmbqmbrmbsmbtmbumbvmbwmbxmbymbzmcamcbmccmcdmcemcfmcg" +
	"mchmcimcjmckmclmcmmcnmcomcpmcqmcrmcsmctmcumcvmcwmcxmcymczmdamdbmdcmddmdemdfmdgmdhmdimdjmdkmdlmdm" +
	"mdnmdpmdqmdrmdsmdtmdumdvmdwmdxmdymdzmeamebmecmedmeemefmehmeimejmekmelmemmenmeomepmeqmermesmetmeu" +
	"mevmewmeymezmfamfbmfcmfdmfemffmfgmfhmfimfjmfkmflmfmmfnmfomfpmfqmfrmfsmftmfumfvmfwmfxmfymfzmgamgb" +
	"mgcmgdmgemgfmggmghmgimgjmgkmglmgmmgnmgomgpmgqmgrmgsmgtmgumgvmgwmgymgzmhamhbmhcmhdmhemhfmhgmhimhj" +
	"mhkmhlmhmmhnmhomhpmhqmhrmhsmhtmhumhwmhxmhymhzmiamibmicmidmiemifmigmihmiimijmikmilmimminmiomipmiq" +
	"mirmismitmiumiwmixmiymizmjbmjcmjdmjemjgmjhmjimjjmjkmjlmjmmjnmjomjpmjqmjrmjsmjtmjumjvmjwmjxmjymjz" +
	"mkamkbmkcmkdmkemkfmkgmkimkjmkkmklmkmmknmkomkpmkqmkrmksmktmkumkvmkwmkxmkymkzmlamlbmlcmlemlfmlgmlh" +
	"mlimljmlkmllmlmmlnmlomlpmlqmlrmlsmltmlumlvmlwmlxmlzmmammbmmcmmdmmemmfmmgmmhmmimmjmmkmmlmmmmmnmmo" +
	"mmpmmqmmrmmtmmummvmmwmmxmmymmzmnamnbmncmndmnemnfmngmnhmnimnjmnkmnlmnmmnnmnpmnqmnrmnsmnumnvmnwmnx" +
	"mnymnzmoamocmodmoemogmohmoimojmokmommonmoomopmoqmormosmotmoumovmowmoxmoymozmpampbmpcmpdmpempgmph" +
	"mpimpjmpkmplmpmmpnmpomppmpqmprmpsmptmpumpvmpwmpxmpympzmqamqbmqcmqemqfmqgmqhmqimqjmqkmqlmqmmqnmqo" +
	"mqpmqqmqrmqsmqtmqumqvmqwmqxmqymqzmramrbmrcmrdmremrfmrgmrhmrimrjmrkmrlmrmmrnmromrpmrqmrrmrsmrtmru" +
	"mrvmrwmrxmrymrzmsamsbmscmsdmsemsfmsgmshmsimsjmskmslmsmmsnmsomspmsqmsrmssmsumsvmswmsxmsymszmtamtb" +
	"mtcmtdmtemtfmtgmthmtimtjmtkmtlmtmmtnmtomtpmtqmtrmtsmttmtumtvmtwmtxmtymuamubmucmudmuemugmuhmuimuj" +
	"mukmulmummuomupmuqmurmusmutmuumuvmuxmuymuzmvamvbmvdmvemvfmvgmvhmvimvkmvlmvnmvomvpmvqmvrmvsmvtmvu" +
	"mvvmvwmvxmvymvzmwamwbmwcmwemwfmwgmwhmwimwkmwlmwmmwnmwomwpmwqmwrmwsmwtmwumwvmwwmwzmxamxbmxcmxdmxe" +
	"mxfmxgmxhmximxjmxkmxlmxmmxnmxomxpmxqmxrmxsmxtmxumxvmxwmxxmxymxzmyamybmycmyemyfmygmyhmyjmykmylmym" +
	"myomypmyrmysmyumyvmywmyxmyymyzmzamzbmzcmzdmzemzgmzhmzimzjmzkmzlmzmmznmzomzpmzqmzrmzsmztmzumzvmzw" +
	"mzxmzymzznaanabnacnaenafnagnajnaknalnamnannaonapnaqnarnasnatnaunavnawnaxnaynaznbanbbnbcnbdnbenbg" +
	"nbhnbinbjnbknblnbmnbnnbonbpnbqnbrnbsnbtnbunbvnbwnbyncancbnccncdncencfncgnchncincjncknclncmncnnco" +
	"ncqncrncsnctncuncxnczndandbndcnddndendfndgndhndindjndkndlndmndnndondpndqndrndsndtndundvndwndxndy" +
	"ndzneanebnecnedneenefnegnehneinejneknemnenneonepneqnernesnetneunevnewnexneyneznfanfdnflnfrnfunga" +
	"ngbngcngdngenggnghngingjngknglngmngnngpngqngrngsngtngungvngwngxngyngznhanhbnhcnhdnhenhfnhgnhhnhi" +
	"nhknhmnhnnhonhpnhqnhrnhtnhunhvnhwnhxnhynhznianibnidnienifnignihniinijniknilnimninnioniqnirnisnit" +
	"niunivniwnixniyniznjanjbnjdnjhnjinjjnjlnjmnjnnjonjrnjsnjtnjunjxnjynjznkankbnkcnkdnkenkfnkgnkhnki" +
	"nkjnkknkmnknnkonkpnkqnkrnksnktnkunkvnkwnkxnkznlanlcnldnlenlgnlinljnlknllnlmnlonlqnlunlvnlwnlxnly" +
	"nlznmanmbnmcnmdnmenmfnmgnmhnminmjnmknmlnmmnmnnmonmpnmqnmrnmsnmtnmunmvnmwnmxnmynmznnannbnncnndnne" +
	"nnfnngnnhnninnjnnknnlnnmnnnnnonnpnnqnnrnntnnunnvnnwnnynnznoanobnocnodnoenofnognohnoinojnoknolnom" +
	"nonnopnoqnornosnotnounovnownoynoznpanpbnpgnphnpinplnpnnponpsnpunpxnpynqgnqknqlnqmnqnnqonqqnqtnqy" +
	"nranrbnrcnrenrfnrgnrinrknrlnrmnrnnrpnrrnrtnrunrxnrznsansbnscnsdnsensfnsgnshnsinsknslnsmnsnnsonsp" +
	"nsqnsrnssnstnsunsvnswnsxnsynszntdntentgntintjntkntmntontpntrntuntwntxntyntznuanucnudnuenufnugnuh" +
	"nuinujnuknulnumnunnuonupnuqnurnusnutnuunuvnuwnuxnuynuznvhnvmnvonwanwbnwcnwenwgnwinwmnwonwrnwwnwx" +
	"nwynxanxdnxenxgnxinxknxlnxmnxnnxonxqnxrnxxnyanybnycnydnyenyfnygnyhnyinyjnyknylnymnynnyonypnyqnyr" +
	"nysnytnyunyvnywnyxnyynzanzbnzdnzinzknzmnzsnzunzynzzoaaoacoaroavobiobkoblobmoboobrobtobuocaochoci" +
	"ocmocoocuodaodkodtoduofoofsofuogbogcogeoggogooguohtohuoiaoieoinojbojcojgojiojpojsojvojwokaokbokc" +
	"okdokeokgokhokiokjokkoklokmoknokookroksokuokvokxokzolaoldoleolkolmoloolroltoluomaombomcomgomiomk" +
	"omlomnomoompomromtomuomwomxomyonaonboneongonionjonkonnonoonponronsontonuonwonxoodoogoonooroosopa" +
	"opkopmopooptopyoraorcoreorgorhoriormornoroorrorsortoruorvorworxoryorzosaoscosiosnosoospossostosu" +
	"osxotaotbotdoteotiotkotlotmotnotqotrotsottotuotwotxotyotzouaouboueouioumovdowiowloyboydoymoyyozm" +
	"pabpacpadpaepafpagpahpaipakpalpampanpaopappaqparpaspaupavpawpaxpaypazpbbpbcpbepbfpbgpbhpbipblpbm" +
	"pbnpbopbppbrpbspbtpbupbvpbypcapcbpccpcdpcepcfpcgpchpcipcjpckpclpcmpcnpcppcwpdapdcpdipdnpdopdtpdu" +
	"peapebpedpeepefpegpehpeipejpekpelpempeopeppeqpespevpexpeypezpfapfepflpgapgdpggpgipgkpglpgnpgspgu" +
	"pgzphaphdphgphhphjphkphlphmphnphophqphrphtphuphvphwpiapibpicpidpiepifpigpihpijpilpimpinpiopippir" +
	"pispitpiupivpiwpixpiypizpjtpkapkbpkcpkgpkhpknpkopkppkrpkspktpkuplaplbplcpldpleplgplhplipljplkpll" +
	"plnploplqplrplspltpluplvplwplyplzpmapmbpmdpmepmfpmhpmipmjpmkpmlpmmpmnpmopmqpmrpmspmtpmwpmxpmypmz" +
	"pnapnbpncpndpnepngpnhpnipnjpnkpnlpnmpnnpnopnppnqpnrpnspntpnupnvpnwpnxpnypnzpocpoepofpogpohpoipok" +
	"polpomponpoopoppoqporpospotpovpowpoxpoyppeppippkpplppmppnppopppppqppspptppupqapqmprcprdpreprfprg" +
	"prhpriprkprlprmprnproprpprqprrprsprtpruprwprxprzpsapscpsdpsepsgpshpsipslpsmpsnpsopsppsqpsrpsspst" +
	"psupswpsyptapthptiptnptoptpptqptrpttptuptvptwptypuapubpucpudpuepufpugpuipujpumpuopuppuqpurpusput" +
	"puupuwpuxpuypwapwbpwgpwipwmpwnpwopwrpwwpxmpyepympynpyspyupyxpyypzhpznquaqubqucqudquequfqugquhqui" +
	"qukqulqumqunqupquqqurqusquvquwquxquyquzqvaqvcqveqvhqviqvjqvlqvmqvnqvoqvpqvsqvwqvyqvzqwaqwcqwhqwm" +
	"qwsqwtqxaqxcqxhqxlqxnqxoqxpqxqqxrqxsqxtqxuqxwqyaqypraarabracradrafragrahrairajrakralramranraorap" +
	"raqrarrasratrauravrawraxrayrazrbbrbkrblrbprcfrdbrearebreeregreirejrelremrenrerresretreyrgargergk" +
	"rgnrgrrgsrgurhgrhpriaribrifrilrimrinrirritriurjgrjirjsrkarkbrkhrkirkmrktrkwrmarmbrmcrmdrmermfrmg" +
	"rmhrmirmkrmlrmmrmnrmormprmqrmsrmtrmurmvrmwrmxrmyrmzrnbrndrngrnlrnnrnprnrrnwrobrocrodroerofrogroh" +
	"rolromronrooroprorrourowrpnrptrrirrorrtrsbrskrslrsmrsnrtcrthrtmrtsrtwrubrucruerufrugruhruirukrun" +
	"ruorupruqrusrutruuruyruzrwarwkrwlrwmrworwrrxdrxwrynrysryurzhsaasabsacsadsaesafsagsahsajsaksamsan" +
	"saosaqsarsassatsausavsawsaxsaysazsbasbbsbcsbdsbesbfsbgsbhsbisbjsbksblsbmsbnsbosbpsbqsbrsbssbtsbu" +
	"sbvsbwsbxsbysbzscbscescfscgschsciscksclscnscoscpscqscssctscuscvscwscxsdasdbsdcsdesdfsdgsdhsdjsdk" +
	"sdlsdnsdosdpsdqsdrsdssdtsdusdxsdzseasebsecsedseesefsegsehseisejsekselsenseosepseqsersessetseusev" +
	"sewseysezsfbsfesfmsfssfwsgasgbsgcsgdsgesggsghsgisgjsgksgmsgpsgrsgssgtsgusgwsgxsgysgzshashbshcshd" +
	"sheshgshhshishjshkshlshmshnshoshpshqshrshsshtshushvshwshxshyshzsiasibsidsiesifsigsihsiisijsiksil" +
	"simsinsipsiqsirsissiusivsiwsixsiysizsjasjbsjdsjesjgsjksjlsjmsjnsjosjpsjrsjssjtsjusjwskaskbskcskd" +
	"skeskfskgskhskiskjskmsknskoskpskqskrskssktskuskvskwskxskyskzslcsldsleslfslgslhslisljslksllslmsln" +
	"slpslqslrslssltsluslvslwslxslyslzsmasmbsmcsmesmfsmgsmhsmjsmksmlsmmsmnsmosmpsmqsmrsmssmtsmusmvsmw" +
	"smxsmysmzsnasncsndsnesnfsngsnisnjsnksnlsnmsnnsnosnpsnqsnrsnssnusnvsnwsnxsnysnzsoasobsocsodsoesog" +
	"sohsoisojsoksolsomsoosopsoqsorsossotsousovsowsoxsoysozspaspbspcspdspespgspispksplspmspnsposppspq" +
	"sprspssptspuspvspxspysqasqhsqisqksqmsqnsqosqqsqrsqssqtsqusqxsrasrbsrcsrdsresrfsrgsrhsrisrksrlsrm" +
	"srnsrosrpsrqsrrsrssrtsrusrvsrwsrxsrysrzssbsscssdssessfssgsshssissjssksslssmssnssosspssqssrssssst" +
	"ssussvsswssxssysszstastbstdstestfstgsthstistjstkstlstmstnstostpstqstrstssttstustvstwstysuasubsuc" +
	"suesugsuisujsuksunsuosuqsursussutsuvsuwsuxsuysuzsvasvbsvcsvesvksvmsvssvxswaswbswcsweswfswgswhswi" +
	"swjswkswlswmswnswoswpswqswrswsswtswuswvswwswxswysxbsxcsxesxgsxksxlsxmsxnsxosxrsxssxusxwsyasybsyc" +
	"syisyksylsymsynsyosyrsyssywsyxsyyszaszbszcszdszeszgszlsznszpszsszvszwszytaatabtactadtaetaftagtah" +
	"tajtaktaltamtantaotaptaqtartastattautavtawtaxtaytaztbatbctbdtbetbftbgtbhtbitbjtbktbltbmtbntbotbp" +
	"tbrtbstbttbutbvtbwtbxtbytbztcatcbtcctcdtcetcftcgtchtcitcktcltcmtcntcotcptcqtcstcttcutcwtcxtcytcz" +
	"tdatdbtdctddtdetdftdgtdhtditdjtdktdltdmtdntdotdqtdrtdstdttdvtdxtdyteatebtectedteeteftegtehteitek" +
	"teltemtenteotepteqtertestetteutevtewtexteyteztfitfntfotfrtfttgatgbtgctgdtgetgftghtgitgjtgktgltgn" +
	"tgotgptgqtgrtgstgttgutgvtgwtgxtgytgzthathdthethfthhthithkthlthmthnthpthqthrthsthtthuthvthythztia" +
	"tictiftigtihtiitijtiktiltimtintiotiptiqtirtistittiutivtiwtixtiytiztjatjgtjitjjtjltjmtjntjotjptjs" +
	"tjutjwtkatkbtkdtketkftkgtkltkmtkntkptkqtkrtkstkttkutkvtkwtkxtkztlatlbtlctldtlftlgtlhtlitljtlktll" +
	"tlmtlntlotlptlqtlrtlstlttlutlvtlxtlytmatmbtmctmdtmetmftmgtmhtmitmjtmktmltmmtmntmotmqtmrtmstmttmu" +
	"tmvtmwtmytmztnatnbtnctndtngtnhtnitnktnltnmtnntnotnptnqtnrtnstnttnutnvtnwtnxtnytnztobtoctodtoftog" +
	"tohtoitojtoktoltomtontootoptoqtortostoutovtowtoxtoytoztpatpctpetpftpgtpitpjtpktpltpmtpntpotpptpq" +
	"tprtpttputpvtpwtpxtpytpztqbtqltqmtqntqotqptqqtqrtqttqutqwtratrbtrctrdtretrftrgtrhtritrjtrltrmtrn" +
	"trotrptrqtrrtrstrttrutrvtrwtrxtrytrztsatsbtsctsdtsetsgtshtsitsjtsktsltsmtsntsotsptsqtsrtsststtsu" +
	"tsvtswtsxtsytszttattbttcttdttettfttgtthttittjttkttlttmttnttottpttqttrttstttttuttvttwttyttztuatub" +
	"tuctudtuetuftugtuhtuitujtuktultumtuntuotuqturtustuutuvtuxtuytuztvatvdtvetvktvltvmtvntvotvstvttvu" +
	"tvwtvxtvytwatwbtwctwdtwetwftwgtwhtwitwltwmtwntwotwptwqtwrtwttwutwwtwxtwytxatxbtxctxetxgtxhtxitxj" +
	"txmtxntxotxqtxrtxstxttxutxxtxytyatyetyhtyityjtyltyntyptyrtystyttyutyvtyxtyytyztzatzhtzjtzltzmtzn" +
	"tzotzxuamuanuarubaubiublubrubuubyudaudeudgudiudjudludmuduuesufiugaugbugeughugnugougyuhauhnuiguis" +
	"uivujiukaukgukhukiukkuklukpukqukruksukuukvukwukyulaulbulculeulfuliulkullulmulnuluulwumaumbumcumd" +
	"umgumiummumnumoumpumrumsumuunaunduneunguniunkunmunnunrunuunxunzuonupiupvuraurburcurdureurfurgurh" +
	"uriurkurlurmurnurourpurrurturuurvurwurxuryurzusaushusiuskuspussusuutauteuthutputrutuuumuuruuuuve" +
	"uvhuvluwauyauzbuznuzsvaavaevafvagvahvaivajvalvamvanvaovapvarvasvauvavvayvbbvbkvecvedvelvemvenveo" +
	"vepvervgrvgtvicvidvievifvigvilvinvisvitvivvkavkjvkkvklvkmvknvkovkpvktvkuvkzvlpvlsvmavmbvmcvmdvme" +
	"vmfvmgvmhvmivmjvmkvmlvmmvmpvmqvmrvmsvmuvmvvmwvmxvmyvmzvnkvnmvnpvolvorvotvravrovrsvrtvsivslvsvvto" +
	"vumvunvutvwawaawabwacwadwaewafwagwahwaiwajwalwamwanwaowapwaqwarwaswatwauwavwawwaxwaywazwbawbbwbe" +
	"wbfwbhwbiwbjwbkwblwbmwbpwbqwbrwbswbtwbvwbwwcawciwddwdgwdjwdkwdtwduwdyweawecwedwegwehweiwemweowep" +
	"werweswetweuwewwfgwgawgbwggwgiwgowguwgywhawhgwhkwhuwibwicwiewifwigwihwiiwijwikwilwimwinwirwiuwiv" +
	"wiywjawjiwkawkbwkdwklwkrwkuwkwwkywlawlcwlewlgwlhwliwlkwllwlmwlnwlowlrwlswluwlvwlwwlxwlywmawmbwmc" +
	"wmdwmewmgwmhwmiwmmwmnwmowmswmtwmwwmxwnbwncwndwnewngwniwnkwnmwnnwnownpwnuwnwwnywoawobwocwodwoewof" +
	"wogwoiwokwolwomwonwooworwoswowwoywpcwrbwrgwrhwriwrkwrlwrmwrnwrowrpwrrwrswruwrvwrwwrxwrywrzwsawsg" +
	"wsiwskwsrwsswsuwsvwtfwthwtiwtkwtmwtwwuawubwudwuhwulwumwunwurwutwuuwuvwuxwuywwawwbwwowwrwwwwxawxw" +
	"wybwyiwymwynwyrwyyxaaxabxacxadxaexagxaixajxakxalxamxanxaoxapxaqxarxasxatxauxavxawxayxbbxbcxbdxbe" +
	"xbgxbixbjxbmxbnxboxbpxbrxbwxbyxcbxccxcexcgxchxclxcmxcnxcoxcrxctxcuxcvxcwxcyxdaxdcxdkxdmxdoxdqxdy" +
	"xebxedxegxelxemxepxerxesxetxeuxfaxgaxgbxgdxgfxggxgixglxgmxgrxguxgwxhaxhcxhdxhexhmxhoxhrxhtxhuxhv" +
	"xibxiixilxinxirxisxivxiyxjbxjtxkaxkbxkcxkdxkexkfxkgxkixkjxkkxklxknxkoxkpxkqxkrxksxktxkuxkvxkwxkx" +
	"xkyxkzxlaxlbxlcxldxlexlgxlixlnxloxlpxlsxluxlyxmaxmbxmcxmdxmexmfxmgxmhxmjxmkxmlxmmxmnxmoxmpxmqxmr" +
	"xmsxmtxmuxmvxmwxmxxmyxmzxnaxnbxngxnhxnixnjxnkxnmxnnxnoxnqxnrxnsxntxnuxnyxnzxocxodxogxoixokxomxon" +
	"xooxopxorxowxpaxpbxpcxpdxpexpfxpgxphxpixpjxpkxplxpmxpnxpoxppxpqxprxpsxptxpuxpvxpwxpxxpyxpzxqaxqt" +
	"xraxrbxrdxrexrgxrixrmxrnxrrxrtxruxrwxsaxsbxscxsdxsexshxsixsjxslxsmxsnxsoxspxsqxsrxssxsuxsvxsyxta" +
	"xtbxtcxtdxtextgxthxtixtjxtlxtmxtnxtoxtpxtqxtrxtsxttxtuxtvxtwxtyxuaxubxudxugxujxulxumxunxuoxupxur" +
	"xutxuuxvexvixvnxvoxvsxwaxwcxwdxwexwgxwjxwkxwlxwoxwrxwtxwwxxbxxkxxmxxrxxtxyaxybxyjxykxylxytxyyxzh" +
	"xzmxzpyaayabyacyadyaeyafyagyahyaiyajyakyalyamyanyaoyapyaqyaryasyatyauyavyawyaxyayyazybaybbybeybh" +
	"ybiybjybkyblybmybnyboybxybyychyclycnycpydayddydeydgydkyeayecyeeyeiyejyelyeryesyetyeuyevyeyygaygi" +
	"yglygmygpygrygsyguygwyhayhdyhlyhsyiayidyifyigyihyiiyijyikyilyimyinyipyiqyiryisyityiuyivyixyizyka" +
	"ykgykiykkyklykmyknykoykryktykuykyylaylbyleylgyliyllylmylnyloylryluylyymbymcymdymeymgymhymiymkyml" +
	"ymmymnymoympymqymrymsymxymzynayndyneyngynkynlynnynoynqynsynuyobyogyoiyokyolyomyonyoryotyoxyoyypa" +
	"ypbypgyphypmypnypoyppypzyrayrbyreyrkyrlyrmyrnyroyrsyrwyryyscysdysgyslysmysnysoyspysryssysyytaytl" +
	"ytpytwytyyuayubyucyudyueyufyugyuiyujyukyulyumyunyupyuqyuryutyuwyuxyuyyuzyvayvtywaywgywlywnywqywr" +
	"ywtywuywwyxayxgyxlyxmyxuyxyyyryyuyyzyzgyzkzaazabzaczadzaezafzagzahzaizajzakzalzamzaozapzaqzarzas" +
	"zatzauzavzawzaxzayzazzbazbczbezblzbtzbuzbwzcazcdzchzdjzeazegzehzenzgazgbzghzgmzgnzgrzhazhbzhdzhi" +
	"zhnzhozhwziazibzikzilzimzinziwzizzkazkbzkdzkgzkhzkkzknzkozkpzkrzktzkuzkvzkzzlazljzlmzlnzlqzmazmb" +
	"zmczmdzmezmfzmgzmhzmizmjzmkzmlzmmzmnzmozmpzmqzmrzmszmtzmuzmvzmwzmxzmyzmzznaznezngznkznszoczohzom" +
	"zoozoqzorzoszpazpbzpczpdzpezpfzpgzphzpizpjzpkzplzpmzpnzpozppzpqzprzpszptzpuzpvzpwzpxzpyzpzzqezra" +
	"zrgzrnzrozrpzrszsazskzslzsmzsrzsuzteztgztlztmztnztpztqztszttztuztxztyzuazuhzulzumzunzuyzwazxxzyb" +
	"zygzyjzynzypzzazzj"

// iso6391To3 maps the 184 ISO 639-1 codes to ISO 639-3 (J2N-07: ja → jpn, fr → fra, …).
var iso6391To3 = map[string]string{
	"aa": "aar", "ab": "abk", "ae": "ave", "af": "afr", "ak": "aka", "am": "amh",
	"an": "arg", "ar": "ara", "as": "asm", "av": "ava", "ay": "aym", "az": "aze",
	"ba": "bak", "be": "bel", "bg": "bul", "bi": "bis", "bm": "bam", "bn": "ben",
	"bo": "bod", "br": "bre", "bs": "bos", "ca": "cat", "ce": "che", "ch": "cha",
	"co": "cos", "cr": "cre", "cs": "ces", "cu": "chu", "cv": "chv", "cy": "cym",
	"da": "dan", "de": "deu", "dv": "div", "dz": "dzo", "ee": "ewe", "el": "ell",
	"en": "eng", "eo": "epo", "es": "spa", "et": "est", "eu": "eus", "fa": "fas",
	"ff": "ful", "fi": "fin", "fj": "fij", "fo": "fao", "fr": "fra", "fy": "fry",
	"ga": "gle", "gd": "gla", "gl": "glg", "gn": "grn", "gu": "guj", "gv": "glv",
	"ha": "hau", "he": "heb", "hi": "hin", "ho": "hmo", "hr": "hrv", "ht": "hat",
	"hu": "hun", "hy": "hye", "hz": "her", "ia": "ina", "id": "ind", "ie": "ile",
	"ig": "ibo", "ii": "iii", "ik": "ipk", "io": "ido", "is": "isl", "it": "ita",
	"iu": "iku", "ja": "jpn", "jv": "jav", "ka": "kat", "kg": "kon", "ki": "kik",
	"kj": "kua", "kk": "kaz", "kl": "kal", "km": "khm", "kn": "kan", "ko": "kor",
	"kr": "kau", "ks": "kas", "ku": "kur", "kv": "kom", "kw": "cor", "ky": "kir",
	"la": "lat", "lb": "ltz", "lg": "lug", "li": "lim", "ln": "lin", "lo": "lao",
	"lt": "lit", "lu": "lub", "lv": "lav", "mg": "mlg", "mh": "mah", "mi": "mri",
	"mk": "mkd", "ml": "mal", "mn": "mon", "mr": "mar", "ms": "msa", "mt": "mlt",
	"my": "mya", "na": "nau", "nb": "nob", "nd": "nde", "ne": "nep", "ng": "ndo",
	"nl": "nld", "nn": "nno", "no": "nor", "nr": "nbl", "nv": "nav", "ny": "nya",
	"oc": "oci", "oj": "oji", "om": "orm", "or": "ori", "os": "oss", "pa": "pan",
	"pi": "pli", "pl": "pol", "ps": "pus", "pt": "por", "qu": "que", "rm": "roh",
	"rn": "run", "ro": "ron", "ru": "rus", "rw": "kin", "sa": "san", "sc": "srd",
	"sd": "snd", "se": "sme", "sg": "sag", "sh": "hbs", "si": "sin", "sk": "slk",
	"sl": "slv", "sm": "smo", "sn": "sna", "so": "som", "sq": "sqi", "sr": "srp",
	"ss": "ssw", "st": "sot", "su": "sun", "sv": "swe", "sw": "swa", "ta": "tam",
	"te": "tel", "tg": "tgk", "th": "tha", "ti": "tir", "tk": "tuk", "tl": "tgl",
	"tn": "tsn", "to": "ton", "tr": "tur", "ts": "tso", "tt": "tat", "tw": "twi",
	"ty": "tah", "ug": "uig", "uk": "ukr", "ur": "urd", "uz": "uzb", "ve": "ven",
	"vi": "vie", "vo": "vol", "wa": "wln", "wo": "wol", "xh": "xho", "yi": "yid",
	"yo": "yor", "za": "zha", "zh": "zho", "zu": "zul",
}

// iso6392BTo3 maps the 20 ISO 639-2/B (bibliographic) codes that differ from ISO 639-3,
// which WEKO2 emits (J2E-11, D-J2J-05): fre → fra, ger → deu, …
var iso6392BTo3 = map[string]string{
	"alb": "sqi", "arm": "hye", "baq": "eus", "bur": "mya", "chi": "zho", "cze": "ces",
	"dut": "nld", "fre": "fra", "geo": "kat", "ger": "deu", "gre": "ell", "ice": "isl",
	"mac": "mkd", "mao": "mri", "may": "msa", "per": "fas", "rum": "ron", "slo": "slk",
	"tib": "bod", "wel": "cym",
}
